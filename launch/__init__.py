"""What main.py runs: settings from flags, the estimator they describe, and one function per mode."""
