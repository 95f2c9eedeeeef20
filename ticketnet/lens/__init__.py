"""A router's internals by name (`run_with_cache`, `inspect_ticket`) and the parity suite against PyTorch."""
