"""Process-level helpers every stage may use and none owns: the cyclic GC paused for a batch
of work (`gc_pause`), the recursion limit raised for a run (`recursion_limit`), memos that
live for one call (`run_memos`), lazy package exports (`lazy_exports`), atomic writes
(`atomic_write`), how user-named files are read and shown (`user_files`), how a
program to start is found (`program_lookup`, PATH's absolute folders only) and what failed,
in words, out of nested exception groups (`failures`)."""
