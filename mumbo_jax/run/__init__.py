"""Applications: config files, the CLI, strategy comparisons, crash-safe tuning."""
