"""Programs checked before they run: a run_code program is type-checked against the
declarations of the tools its scope sees, and a definite mistake (an unknown tool, an unknown
or missing argument, a literal of the wrong type or outside an enum, a wrong arity) refuses
the run before its first call. `outcome.py` holds what every checker returns; each language's
checker lives in a module of its own."""
