"""What a call is and how the executor runs it: the request and its context (`execution`),
the executor's stages (`executor`) and its extension points (`hooks`: listeners, guards,
wrappers, services), results and error codes (`results`), scopes (`scopes`), registered tools
(`specs`), cancellation (`cancellation`: an `AbortController` and its signal), frozen JSON
values across the executor (`jsonvalue`)."""
