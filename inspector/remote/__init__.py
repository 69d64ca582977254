"""The engine on another machine: a WebSocket server of the engine protocol (`serve`) and its client."""
