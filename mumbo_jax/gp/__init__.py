"""The GP stack: kernels, model specs, hyper-parameter fits, posteriors and joint moments,
the learned cost model, and the float64 precision check."""

__all__ = ["precision", "kernels", "models", "fitting", "posterior", "costmodel"]
