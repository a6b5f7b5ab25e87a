"""Process-level helpers every stage may use and none owns: the cyclic GC paused for a batch
command (`gc_pause`), the recursion limit raised for a run (`recursion_limit`), memos that
live for one call (`run_memos`), lazy package exports (`lazy_exports`), atomic writes
(`atomic_write`) and how user-named files are read and shown (`user_files`)."""
