"""Acquisitions: max-value samples g*, MUMBO and MES gains, the paper's baselines."""

__all__ = ["maxvalue", "acquisitions", "baselines"]
