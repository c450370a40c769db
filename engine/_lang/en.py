"""The English texts: the same names, placeholders, sections and order of checks as
``engine._lang.zh``, written for an English-speaking team."""

# -- names ------------------------------------------------------------------------------------
CLARIFY_STEP = "clarify"
GOAL_STEP = "set the goal"
WORK_STEP = "work"
JUDGE_LABEL = "{step} · judge"
BRIEF_FILE = "brief.md"
GOAL_FILE = "goal.md"
QA_LOG_FILE = "qa-log.md"
