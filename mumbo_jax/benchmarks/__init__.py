"""Benchmark problems (the paper's Appendix B and more) and real tuning tasks."""
