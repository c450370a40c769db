"""The five rules texts injected into the roles' system prompts (importable, editable, joinable).

These names are the spec's Chinese texts (``engine._lang.zh``); the roles take the texts of the
language in effect (``engine._lang.words()``), so an English run gets ``engine._lang.en``'s. The
section titles in them are the ones the document parsers in ``engine._docs`` look for.
"""

from engine._lang.zh import CLARIFY_RULES, COORDINATOR_RULES, JUDGE_RULES, ORACLE_RULES, WORKER_RULES

__all__ = ["CLARIFY_RULES", "COORDINATOR_RULES", "JUDGE_RULES", "ORACLE_RULES", "WORKER_RULES"]
