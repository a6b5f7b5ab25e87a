"""Doing less work for the same bytes: per-tool results kept across runs (`cache`), the SDK
assembled from per-tool chunks (`assembly`), and per-tool work spread over forked processes
(`shares`). Every path gives the bytes of a run in one go."""
