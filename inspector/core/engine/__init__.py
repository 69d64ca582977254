"""The engine: one forward and backward with hooks on the ticked modules (`runner.run`), the hook set that
captures and edits (`hookset`), the captured result and its statistics (`result`, `stats`), the statistics
worked out after the run (`deferred`), a run's diagnostics (`diagnostics`), a model's zero head (`zero_head`)
and where an edit reaches (`edit_reach`). `inspector.core.run` is `runner.run`."""
