"""ReuseLens collector: runs an unmodified CUDA application under the Compute Sanitizer tool library."""
