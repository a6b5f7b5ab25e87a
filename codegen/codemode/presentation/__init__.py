"""What the model reads: the system prompt (`prompt`), how much of the SDK comes up front
(`tiers`), discovery from a program (`discovery`: search, describe, servers), the texts of
`run_code` per language (`languages`) and a run's result cut to what clients accept
(`fitting`)."""
