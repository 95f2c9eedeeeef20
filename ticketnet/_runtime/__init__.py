"""Process plumbing that knows nothing of tickets: worker threads, the allocator, atomic writes, timing."""
