"""How a run_code worker is contained by the operating system.

`launchers` holds the `sandbox` setting (`auto`, `bubblewrap`, `namespaces`, `none`), its
probe and the launcher that starts a worker under it; `nsboot` is the `namespaces` sandbox
(a standard-library program that builds the namespaces with raw system calls); `seccomp`
assembles the system-call filter both sandboxes install; `cgroups` bounds each run's
processes and memory where the host can.
"""
