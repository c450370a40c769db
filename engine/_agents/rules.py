"""The rules texts injected into the roles' system prompts (importable, editable, joinable).

These names are the spec's Chinese texts (``engine._lang.zh``); the roles take the texts of the
language in effect (``engine._lang.words()``), so an English run gets ``engine._lang.en``'s. The
section titles in them are the ones the document parsers in ``engine._docs`` look for.

``shared_files_rules`` is the one rule the spec does not have: where the files people share are
and where files for them go. It names the folders of a run's own workbench, so the runtime adds
it to every role's system prompt (and every worker's) when it starts a session, not here.
"""

import os

from engine._agents.workbench import Workbench
from engine._lang import words
from engine._lang.zh import CLARIFY_RULES, COORDINATOR_RULES, JUDGE_RULES, ORACLE_RULES, WORKER_RULES

__all__ = ["CLARIFY_RULES", "COORDINATOR_RULES", "JUDGE_RULES", "ORACLE_RULES", "WORKER_RULES",
           "shared_files_rules"]


def shared_files_rules(workbench: Workbench) -> str:
    """The rule about ``workbench``'s ``inbox/`` (files people shared: images are opened with Read)
    and ``outbox/`` (files handed back when the request ends), in the language in effect; the
    folders as the model writes them (workspace-relative, absolute for an outside workbench)."""
    def shown(folder):
        return (os.path.abspath(folder) if workbench.external else workbench.show(folder)) + "/"

    return words().SHARED_FILES_RULES.format(inbox=shown(workbench.inbox), outbox=shown(workbench.outbox))
