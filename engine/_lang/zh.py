"""The spec's Chinese texts, byte for byte: every model-facing rule and prompt, the section titles
written, the workbench's file names and the step names. ``engine._lang.en`` has the same names."""

# -- names ------------------------------------------------------------------------------------
CLARIFY_STEP = "确认需求"
GOAL_STEP = "设定目标"
WORK_STEP = "干活"
JUDGE_LABEL = "{step}·判定"
BRIEF_FILE = "需求.md"
GOAL_FILE = "目标.md"
QA_LOG_FILE = "问答记录.md"
