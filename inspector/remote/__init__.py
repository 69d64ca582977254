"""The engine on another machine: a WebSocket server of the engine protocol and its client.

`server` serves the engine (`network-inspector serve`): one engine thread per server (`engine_thread`), the
requests of each connection in their own lanes, latest wins; what a client may name on the server is held to
the data root and to the server's own trust (`admission`, `data_root`); the token (`tokens`) is checked before
the connection opens, the limits (`limits`) after. `client.EngineClient` speaks to it, synchronously.
Frames become messages in `incoming`, on both sides. Nothing is pickled; no code crosses.
"""
