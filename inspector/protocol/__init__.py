"""The engine protocol: what the window or a command asks the engine for, and what the engine says back.

One request is one versioned message (`messages.Message`): a kind (`load`, `run`, `attribute`, ...), an id the
client picks, and a body made of the project's plain records. Every answer is an event keyed by that id
(`accepted`, `progress`, `partial`, `result`, `failure`, `cancelled`). Records travel as JSON checked by a
schema (`values`, `schemas`); arrays as binary frames with their dtype and shape (`frames`). Nothing on the
wire is pickled and no code crosses in either direction: a record is rebuilt only when its name is in the
allowlist (`registry`), from its fields. Torch-free and Qt-free: the window and the server read it alike.
"""

VERSION = 1
