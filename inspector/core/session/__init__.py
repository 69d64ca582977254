"""Session files (`*.inspector.json`): the one schema (`schema`), reading, writing and replaying them (`file`).
"""
