"""The build-time TypeScript declarations (`sdk`)."""
