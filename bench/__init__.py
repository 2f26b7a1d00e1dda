"""Benchmarks: the LoCoMo retrieval harness (bench.locomo) and the load benchmark (bench.perf)."""
