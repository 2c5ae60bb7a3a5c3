"""The GP stack: kernels, model specs, hyper-parameter fits, posteriors and joint moments."""
