"""The GP stack: kernels, model specs, hyper-parameter fits, posteriors and joint moments,
hyper-parameter marginalisation (NUTS), the learned cost model, and the float64 precision check."""

__all__ = ["precision", "kernels", "modelbase", "models", "fitting", "posterior", "marginal", "costmodel"]
