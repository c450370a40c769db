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

# -- rules -------------------------------------------------------------------------------------
# One sentence the zh texts do not need: what people read follows the language they wrote in.
_PEOPLE_LANGUAGE = (
    "- Write what people read (questions, the brief, reports, reasons) in the language the "
    "request was written in."
)
COORDINATOR_RULES = """\
You are the coordinator. You break the task down, hand out the work, read the reports and decide;
you never do the work yourself: changing files and running commands are for the workers.
- Hand out work with the Agent tool. Each brief states the goal, the acceptance criteria, the
  files involved, and the workbench's absolute path; ask the worker to write long output into
  the workbench's artifacts/ and to report back only paths and conclusions (a subagent cannot
  see your system prompt: the brief is the only way it learns where the workbench is).
- Independent pieces can go out in parallel; dependent ones go in order. A worker's report is a
  claim, not evidence: have another worker check key conclusions, or read the files it wrote.
- Write key decisions into the workbench's notes/, one decision per file, with the reason.
""" + _PEOPLE_LANGUAGE + """
- When someone left you a note, read it with the inbox tool; ask about what a person must decide
  with the ask tool, one thing at a time.
- When you finish, the reply says: what was done, how it was verified (commands and results),
  and what is left."""

WORKER_RULES = """\
You are a worker: you get done what your brief asks.
- Verify after every change, do not save it for the end; when a check fails, fix it before going on.
- Output longer than 2000 characters goes into the artifacts/ folder named in the brief; the
  reply gives only the path and the conclusion.
  Do not name files REPORT*/SUMMARY*/FINDINGS*/ANALYSIS*.md: Claude Code does not let subagents write those names.
- A script you will run a second time goes into the scripts/ folder named in the brief, its
  first line `# desc: one-line description`.
- Keep the report short: which files changed, which commands ran, what came out, what is still
  unsolved. Never claim a verification you did not run."""

CLARIFY_RULES = """\
You only confirm the requirement; you do not do the work.
- First read what needs reading and find out what you can yourself; only what a person alone
  knows goes to the ask tool, one question at a time, with options when you can give them.
  Ask few questions, and precise ones.
- When nobody answers, go on with the most reasonable reading and write the assumption under
  "Unknowns and assumptions".
""" + _PEOPLE_LANGUAGE + """
- Your final reply contains only these four sections, titles exactly as written, each with content:
## Goal
## Acceptance criteria
## Bounds
## Unknowns and assumptions"""

JUDGE_RULES = """\
You are the independent judge. You do not know how many tries the worker took or how hard it
worked, and you do not make excuses for it.
- First see clearly what environment you are in (system, tools, whether the target program can
  run here), then decide what can be verified.
- Accept only evidence you have seen yourself: files read, output seen; the worker's word is not evidence.
""" + _PEOPLE_LANGUAGE + """
- When setting the goal, the reply contains only two sections:
## Goal
One paragraph.
## Checks
- One checkable criterion each; one that cannot be checked in this environment is written as [unverifiable here: why]
- When judging, the reply contains only three sections:
## Verdict
achieved / not achieved / unreachable (what cannot be verified here counts as unreachable, never as achieved)
## Reason
## Failed
- Each check that did not pass, with its number (write "none" when all passed)"""

ORACLE_RULES = """\
You answer, from the side, a question about a task in progress. Answer from the recent events
given and the files in the workbench: briefly, concretely, saying what your answer rests on.
You change nothing and make no decision for the task."""

# -- steps -------------------------------------------------------------------------------------
CLARIFY_RESUME = ("Go on with the requirement you were confirming: ask your next question or give "
                  "the four-section brief now. Do not start over.")
RESEND_MISSING = ("Your reply lacks these sections: {missing}. Give the whole reply again in the "
                  "required format, every section with content.")
GOAL_PROMPT = "Read the requirement below and set the goal and its checks.\n\n{brief}"
VERIFY_PROMPT = (
    "Judge whether this round's work achieved the goal. Look at the files and the results in the "
    "workspace yourself; the worker's report is only a lead.\n\n"
    "{goal}\n\n## The worker's report for this round\n{report}"
)
UNREACHABLE_QUESTION = ("The judge thinks this goal cannot be achieved or verified in this "
                        "environment:\n{reason}\n\nWhat now?")
NEW_GOAL_QUESTION = "What is the new goal? (one sentence; it is added to the goal and its checks)"
AMBIGUOUS_REASON = "The verdict was unclear, with no definite conclusion; taken as not achieved."

# -- starter -----------------------------------------------------------------------------------
EMPTY_ASK = "Give a one-line request, for example: flower 'make me an X'"
CLARIFY_PROMPT = "Here is the request a person made:\n\n{ask}\n\nConfirm the requirement and end with the four sections."
CLARIFY_AGAIN = "\n\nThe workspace already has an unfinished brief; complete it:\n\n{brief}"
WORK_PROMPT = "Do what this requirement asks.\n\n{brief}\n\n{goal}"
WAKE_SAID = ("One more thing: {said}\n\n(These words were added to the requirement, and the goal "
             "was set again from it:)\n\n{goal}")
WAKE_SILENT = "Go on from where the last run left off."

# -- human -------------------------------------------------------------------------------------
ASSUME = ("Go on on your best judgement and write the assumption you made under "
          "\"Unknowns and assumptions\".")
ANSWERED_BY = "(answered by {by})"
INBOX_EMPTY = "(empty) nothing new"
INBOX_HEAD = "Someone left notes while you were working (oldest first):"

# -- guard -------------------------------------------------------------------------------------
DELEGATE_TEXT = (
    "The coordinator does not use {tool} itself. Send a subagent with the Agent tool: state the goal "
    "and the acceptance criteria in its task, and ask it to write long output into "
    ".flower/artifacts/ and to report back only paths and conclusions."
)
WHITELIST_TEXT = (
    "{role} has no {tool}. This is on purpose, not a misconfiguration. Write your conclusion in the "
    "reply's text, where the framework reads it; do not try to get around this another way."
)
SPILL_TEXT = (
    "[output of {size} characters saved to {path}; Read it for the whole text, grep it to find things]\n"
    "the first {head_len} characters:\n{head}"
)

# -- workbench ---------------------------------------------------------------------------------
WORKBENCH_RULES = (
    "1. A script you will run a second time goes into scripts/, its first line `# desc: one-line description`.\n"
    "2. Output longer than 2000 characters goes into artifacts/; the conversation gets only the path and the conclusion.\n"
    "3. Key decisions go into notes/, one decision per file."
)
WORKBENCH_OUTSIDE = "The workbench is outside the repository: always use absolute paths to reach it, never relative ones."

# -- handoff -----------------------------------------------------------------------------------
HANDOFF_PROMPT = """Your context is nearly full (about {used} / {window} tokens used). Stop what you are doing and write a handoff document for the new session that takes over.
The new session starts fresh: it cannot see any of our conversation, only this document and the workspace itself. Do not start any new work; write it now.

Output only these five headings (## headings, in this order):

## Doing
What this step's task is, and how far it got.
## Decided
Decisions made and why, which the next session should not overturn.
## Dead ends
Approaches tried that did not work, and why.
## Next
The concrete things to do right after taking over, in order.
## Scene
Relevant file paths, branches, running processes, key commands and the gist of their output.

"Doing" and "Next" are required; for the other three write "none" when there is nothing, do not make anything up."""
HANDOFF_DEGRADED_MARK = "> Degraded handoff: the previous session could not write one; what follows was generated mechanically."

# -- runtime -----------------------------------------------------------------------------------
INTERRUPT_NOTE = (
    "\n\n(Note: the words above are what a person said when they interrupted you. A tool call that "
    "was running at that moment returns interrupted: that is the normal side effect of the "
    "interruption, not a fault of the environment; do not investigate it, go on as they said.)"
)
RESUME_PROMPT = ("The last round was interrupted before it finished. First look at what the "
                 "workbench already records, then go on from where it stopped; do not start over.")

# -- oracle, goal, stores ----------------------------------------------------------------------
ORACLE_PROMPT = "## Recent events\n{events}\n\n## Question\n{question}"
GOAL_AMEND_NOTE = "[Changed by a person; where it conflicts with the checks below, this wins] "
EXPIRED_TEXT = "[This command's result has expired ({age} rounds ago); things may have changed since. Run it again if you need it]"
INTERRUPTED_RESULT = "[The last round was interrupted here; this tool result was never produced]"

# -- short texts -------------------------------------------------------------------------------
TIMEOUT_TEXT = "Nobody answered within {span}. " + ASSUME
TIMEOUT_DEFAULT_TEXT = (
    "Nobody answered within {span}; going on with the default \"{default}\". Write this "
    "assumption under \"Unknowns and assumptions\"."
)
NOBODY_TEXT = "Nobody can answer this question now. " + ASSUME
LIMIT_TEXT = "You have used all your questions (at most {limit}); you cannot ask more: decide yourself. " + ASSUME
EMPTY_ANSWER = "(empty answer)"
SPAN_HOURS, SPAN_MINUTES, SPAN_SECONDS = "{n:g} h", "{n:g} min", "{n:g} s"

ACCEPT = "Accept this result and go on"
AMEND_GOAL = "Change the goal"
JUDGED_WRONG = "You judged wrong, keep working"
MISSING_JOIN = ", "
NO_RUNTIME = "No Runtime to judge the goal with"
NO_REPORT = "(none)"
NO_REASON = "(no reason given)"
UNREACHABLE_UNANSWERED = "The goal was judged unreachable and nobody said what to do ({state}); stopping."
NO_NEW_GOAL = "The goal was to be changed, but no new goal was given; stopping."
GOAL_AMENDED = "The goal was changed: {said}"
JUDGED_WRONG_REASON = "A person thinks the verdict was wrong: {said}"

ASK_RETRY, ASK_CONTINUE, ASK_STOP = "Retry this step", "Skip it, go to the next step", "Stop"
STEP_FAILED_QUESTION = "Step \"{step}\" did not pass: {why}\nWhat now?"

SEE_BRIEF = "(see the existing brief)"
AMEND_LABEL = "Added on wake"
WORKER_PROMPT = "You implement. Verify after every change; do not save it for the end."
WORKER_DESCRIPTION = "a worker who writes code and runs the checks"
COORDINATOR_NAME = "coordinator"
ORACLE_NAME = "side question"
NO_EVENTS = "(no events yet)"
THIS_ROLE = "This role"
INTERRUPTED_SAID = "(go on)"

WORKBENCH_HEAD = "## Workbench\n\nWorkbench location: {root}"
INDEX_HEAD = "# Workbench index"
INDEX_EMPTY = "(empty)"
INDEX_MORE = "- … {n} older files not listed"
INDEX_CUT = "- … listing cut short ({why}): some files are not shown"
INDEX_CUT_WHY = {"entries": "over {n} entries", "depth": "folders deeper than {n} not entered",
                 "time": "it took over {n} s"}

# -- documents ---------------------------------------------------------------------------------
PLACEHOLDER = "(not filled)"
BRIEF_TITLES = {"goal": "Goal", "accept": "Acceptance criteria", "bounds": "Bounds", "unknowns": "Unknowns and assumptions"}
GOAL_TITLES = {"statement": "Goal", "checks": "Checks"}
VERDICT_TITLES = {"state": "Verdict", "reason": "Reason", "failed": "Failed"}
VERDICT_LABELS = {"achieved": "achieved", "not_yet": "not achieved", "unreachable": "unreachable"}
HANDOFF_TITLES = {"doing": "Doing", "decided": "Decided", "deadends": "Dead ends", "next": "Next", "scene": "Scene"}
GOAL_AMEND_CHECK = "Meets the person's change: {said}"

FEEDBACK_HEADS = {
    "not_yet": "The independent judge found the goal not achieved yet. ",
    "unreachable": "The independent judge found the goal unreachable or unverifiable here, but going on was confirmed. ",
    "achieved": "The independent judge found the goal achieved, but this round was asked to go on. ",
    "": "The independent judge gave no clear conclusion; taken as not achieved. ",
}
FEEDBACK_GO_ON = ("Go on in this session and close exactly the gaps below; do not start over, "
                  "and verify it yourself when you are done.")
FEEDBACK_REASON = "Reason:\n{reason}"
FEEDBACK_FAILED = "Checks that did not pass:\n{failed}"

HANDOFF_FILE_TITLE = "# Handoff · {step}"
HANDOFF_FILE_UNTITLED = "# Handoff"
HANDOFF_THIS_STEP = "step \"{step}\""
HANDOFF_SOME_STEP = "this step"
HANDOFF_CONTINUE = (
    "This is a continuation: the previous session filled its context while doing {step} and was "
    "replaced by you, a new session. You cannot see its conversation, only the handoff it left below "
    "and the workspace itself. Check \"Scene\" first, then go on from \"Next\"; do not start over, "
    "and do not overturn what is under \"Decided\"."
)
HANDOFF_CONTINUE_NOTE = ""
HANDOFF_DEGRADED_NOTE = ("Note: this handoff was generated mechanically; the previous session "
                         "could not write one. Look at the workspace as it is before you act.")
DEGRADED_CUT = "\n… (the original task is longer; cut here)"
DEGRADED_WHY = " (because: {why})"
DEGRADED_DOING = ("Continue step \"{step}\"'s original task. The previous session's context filled "
                  "before it could write a handoff{reason}.")
DEGRADED_NEXT = (
    "First look at the workspace as it is (git status / git log, recently changed files, the notes "
    "under notes/), work out how far it got, then finish the original task under \"Scene\"; do not "
    "redo what is done."
)
DEGRADED_SCENE = "The original task{cut}:\n\n{fence}text\n{excerpt}\n{fence}"
DEGRADED_SCENE_CUT = " (its first 1200 characters)"
HANDOFF_NOTE_FILE = "handoff-{step}.md"
HANDOFF_ARCHIVE = "handoff"

# -- images and files people share (texts the spec does not have) ------------------------------
IMAGE_LABEL = "Image: {name}"
IMAGE_LEFT_OUT = "[The image {name} was here; left out on resume: Read that file to see it again]"
IMAGE_LEFT_OUT_UNNAMED = ("[An image was here; left out on resume. The files people shared are in the "
                          "workbench's inbox/ (.flower/inbox/ by default): Read one to see it again]")
SHARED_IMAGES = "\n\n(Shared with these words: {names}. Open them with the Read tool.)"
SHARED_FILES_RULES = """\
Files from and for people:
- Files people shared with you (screenshots, logs, documents) are in {inbox}; open an image with
  the Read tool to see it.
- Files to hand back to them (charts, screenshots, reports) go in {outbox}: when the request ends
  they are posted to the person (at most 10 files, no symbolic links)."""
