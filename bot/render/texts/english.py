"""Every sentence the bot says in Slack, in English: one table of the language catalogue.

Constants and ``str.format`` strings with named fields, grouped by where they appear, as bolt keeps
its messages in ``slack_bolt/logger/messages.py``. Sentences only: the render functions
(``bot.render``) and the intakes fill the fields, escape what people and the engine wrote, and
build the Block Kit around them. Mrkdwn marks (``*bold*``, ``_italic_``, backticks) are part of a
sentence. A count-dependent phrase is a pair ``(one, other)``. ``zh.py`` has the same names, shapes
and fields (a test checks); ``bot.render.texts`` serves the one in effect. A ``Sentence`` is one
whose every field is outside text (an error, a URL): its ``format`` masks credentials and escapes
each field, whoever calls it.
"""

from __future__ import annotations

from bot.core.outside_text import Sentence
from bot.render.texts.english_forge import *  # noqa: F403 (the forge's sentences are this table's too)

# -- Who and where, inside other sentences ---------------------------------------------------

SOMEONE = "someone"  # a question answered or a branch pushed by nobody we can name
WORKSPACE = "Workspace: `{path}`"
EMPTY = "(empty)"  # an empty answer, an empty button label

# -- The first reply to a request, and a run's last word -------------------------------------

STARTED = "🌱 *Started.* I'll ask here if anything is unclear; progress shows in the status below."
UNFENCED = ("⚠️ The sandbox is off on this bot (`FLOWER_SANDBOX=off`): this run's commands can read and "
            "change everything the bot's user can, other threads and the bot's own files included.")
QUEUED = ("🕒 *Queued* — number {position} in line. It starts when a running job finishes; "
          "you'll see the status here.")
SUMMARY_ACHIEVED = "🌸 *Done: the goal is achieved.*"
SUMMARY_NOT_ACHIEVED = "❌ *Ended without achieving the goal.*"
ROUNDS = ("{n} round", "{n} rounds")
COST_BOTH = "this request {request} · thread {thread}"
SUMMARY_DONE_HEAD = "*What was done*"  # the coordinator's own report follows
# the checklist's outcome in one line: (one check, several); a link to the checklist follows
SUMMARY_CHECKS = ("{mark} *{passed} of {total} check passed*", "{mark} *{passed} of {total} checks passed*")
SUMMARY_CHECKLIST_LINK = " · <{link}|the checklist>"
SUMMARY_FILES = "📎 Posted to this thread: {names}"  # the files the run handed back (its outbox)
SUMMARY_HEARD = "💬 You said “{said}”{when}: {effect}."  # words that reached the running work
HEARD_WHEN = " in round {round}"
HEARD_ROUNDS = ("the work went on with it for {n} round", "the work went on with it for {n} rounds")
HEARD_BEFORE_WORK = "the goal was set with it"  # said while the request was confirmed or planned
SUMMARY_JUDGE_SAID = "_The judge:_ "  # before the judge's reason
SUMMARY_LEFT_HEAD = "*What is left*"  # the checks still failing
SUMMARY_BRANCH = "Branch `{branch}`"
CHECK_LINE = "{mark} {n}. {text}{note}"  # one check of the goal with its state
CHECK_MARK = {"passed": "✅", "failing": "❌", "pending": "⬜", "unverifiable": "⚠️"}
CHECK_NOTE = {"passed": "", "failing": "", "pending": " _(not judged)_", "unverifiable": " _(can't be verified here)_"}
ARCHIVED_NEW = ":recycle: Archived the last run."  # before STARTED, after /new with a request
RESTART_OPEN_QUESTION = " The question above is still open and takes an answer: _{question}_"

# -- How a run ended or waits, said in its thread (bot.runs) ----------------------------------

RUN_QUEUED_BEHIND = ":hourglass: Queued: {place} run(s) ahead of this one. It starts by itself."
RUN_RESTARTED_CONFIRMING = ":arrows_counterclockwise: The bot restarted; confirming the requirement again."
RUN_RESTARTED_GOING_ON = ":arrows_counterclockwise: The bot restarted."  # the wake banner says the rest
RUN_STOPPED = ":black_square_for_stop: Stopped. Reply here to continue, or `/new` to start over."
RUN_FAILED = Sentence(":x: The run failed: {reason}")
RUN_REPO_FAILED = Sentence(":x: The thread's repository could not be prepared: {reason}")
ROUNDS_RAN_OUT = "the judge's rounds ran out"  # why a run ended without the goal, when nothing else says
# Why a step could not go on (bot.render.failures): {detail} is the error kind and text as the API said them.
FAILED_AUTH = ("the model refused the API key (401: {detail}). Fix `ANTHROPIC_API_KEY` (or "
               "`CLAUDE_CODE_OAUTH_TOKEN`) in the bot's settings and restart it, then reply here to go on.")
FAILED_FORBIDDEN = ("the model refused access (403: {detail}): this key may not use this model or "
                    "organisation. Check the key's permissions, then reply here to go on.")
FAILED_BILLING = ("the model's account has no credit left ({detail}). Add credit or change "
                  "`ANTHROPIC_API_KEY`, then reply here to go on.")
FAILED_MODEL = ("the model name is unknown ({detail}). Fix `ANTHROPIC_MODEL` (or the role's model) in "
                "the bot's settings and restart it, then reply here to go on.")
FAILED_CLI = ("Claude Code could not start ({detail}). Reinstall it on the bot's machine "
              "(`pip install --force-reinstall claude-agent-sdk`), then reply here to go on.")
FAILED_STEP = "step {step} failed: {detail}"

# -- The status message of a run, edited in place --------------------------------------------

STATUS_STATE = {
    "idle": "💤 Idle", "queued": "🕒 Queued", "running": "⏳ Running", "waiting": "💬 Waiting for an answer",
    "waiting_api": "⏳ Waiting for the model's API",
    "done": "✅ Done", "failed": "❌ Failed", "stopped": "⏹️ Stopped", "parked": "⏸️ Paused until someone answers",
    "limited": "⏸️ Paused at a spend limit",
}
STATUS_QUESTION_LINK = " (<{link}|the question>)"  # after "Waiting for an answer": where to answer
STATUS_REASON = "Why: {reason}"  # under a failed run's status line
STATUS_DOING = "*{doing}*"
HEARD = "💬 Your words reached the run: “{said}”"  # under the status line once they did
STATUS_LINE = "is at work: {doing}…"  # Slack's line under the thread, after the app's name
STATUS_STARTING = "starting"
STATUS_ROUND = "round {round}"
# What the run is doing, as people say it (the starter flow's steps and its judge; another
# workflow's step is shown by its own name)
DOING = {"clarify": "Confirming the request", "asking": "Asking you", "goal": "Planning", "work": "Working",
         "judge": "Checking the work"}
STOP_BUTTON = "Stop"
TERMINAL_BUTTON = "Continue in a terminal"
TERMINAL = "To continue this thread's run in a terminal, on `{host}`:\n```cd {path} && flower```"
START_OVER_BUTTON = "Start over"
# Asked before the click counts: (title, text, the confirming button)
STOP_CONFIRM = ("Stop this run?", "The work so far is kept: reply in the thread to continue it.", "Stop")
START_OVER_CONFIRM = ("Start over?", "The work so far is archived and this thread starts again from a new "
                      "request.", "Start over")
CONFIRM_DENY = "Cancel"

# -- A question, and how it closed -----------------------------------------------------------

QUESTION_HEAD = "❓ *Question*"
QUESTION_FROM = " from _{who}_"  # the role or step that asked, after QUESTION_HEAD
QUESTION_FALLBACK = "Question: {text}"
QUESTION_OPTION = "{n}. {option}"  # the options listed in full under the question
REPLY_HINT = "Reply in this thread to answer in your own words"
ANSWER_LEAD = "✅ "
ANSWERED_BY = "answered by {who}"
ANSWERED_FALLBACK = "Question: {text} — answered: {answer}"
CLOSED = "⏱️ {note}"
CLOSED_FALLBACK = "Question: {text} — {outcome}"
NO_ANSWER_IN_TIME = "No answer in time."
CLOSED_STARTED_OVER = "Closed: the thread started over."

# -- A question's deadline: the note under it, and what happens when it passes ---------------

WAIT = "{n:g} {unit}"
WAIT_UNIT = {"hour": ("hour", "hours"), "minute": ("minute", "minutes"), "second": ("second", "seconds")}
DEADLINE_DEFAULT = "If nobody answers within {wait}, I'll go on with {default}."
DEADLINE_PARKS = "If nobody answers within {wait}, the run pauses until somebody does."
WITHIN = " in {wait}"
WITHIN_TIME = " in time"
MOVED_ON_CLOSED = "Closed without an answer: the run moved on."
MOVED_ON = "⏱️ The question above was closed without an answer: the run moved on. Reply here to steer it."
DEFAULT_TAKEN_CLOSED = "No answer{within}: going on with {default}."
DEFAULT_TAKEN = "⏱️ No answer{within}: going on with *{default}*."
PARKED = ("⏸️ Paused: nobody answered the question above{within}, and the run cannot go on without it. "
          "Answer it (a button, or a reply in this thread) and the run picks up where it stopped; "
          "`/new` starts over instead.")

# -- Notes only one person sees: refusals, late clicks ---------------------------------------

REFUSED_USER = ("Sorry {who}, you're not on this bot's list of allowed users. Ask whoever runs "
                "it to add your member ID to FLOWER_ALLOWED_USERS.")
REFUSED_CHANNEL = ("Sorry {who}, I don't take requests in this channel. Ask in an allowed channel, "
                   "or ask whoever runs this bot to add this channel's ID to FLOWER_ALLOWED_CHANNELS.")
ALREADY_ANSWERED = "This question was already answered by {who}: *{answer}*"
QUESTION_CLOSED = "This question is closed: the run is no longer waiting for an answer."

# -- The thread's answers to what was said (bot.inbound.intake) --------------------------------

EMPTY_MENTION = "Tell me what to do in one sentence, e.g. `@flower write a script that converts md to html`."
ASK_WHAT = ":recycle: Archived the last run. What should I do now? Reply here with one sentence."

# -- Progress notices: wake banner, verdicts, handoffs, retries, offline ---------------------

WAKE_HEAD = "↩️ *Picking up where this left off* — {facts}"
WAKE_CONFIRMED = "requirement confirmed"
WAKE_CHECKS = ("goal with {n} check", "goal with {n} checks")
WAKE_REGOAL = "the goal is set again from what you said"  # a follow-up: the old checks are not the ones judged
WAKE_FOLLOW_UP = "follow-up #{n}"
WAKE_PICKED_UP = "no new words: going on where it stopped"
VERDICT_HEAD = {
    "achieved": "✅ *Round {round}: goal achieved.*",
    "not_yet": "🔁 *Round {round}: not yet.*",
    "unreachable": "⛔ *Round {round}: the judge says the goal can't be reached or verified here.*",
}
VERDICT_UNCLEAR = "❔ *Round {round}: no clear verdict, counted as not yet.*"
FAILED_CHECKS = "Failed checks:"
CHOOSE_BELOW = "Choose below what to do next."
CONTEXT_NEAR = "🧠 The session's memory is filling up: a fresh session takes over before it is full."
CONTEXT_FULL = "📝 The session's memory is full: writing down where the work stands, then a fresh session takes over."
HANDOFF_DEGRADED = ("🔄 Handoff written from what is on disk (the session could not write it); a fresh "
                    "session takes over.")
HANDOFF_DONE = "🔄 Handoff written; a fresh session takes over."
RETRY = "⚠️ The model is unavailable{why}, try {attempt}/{max_attempts}; retrying the same session in {delay}."
RETRY_WHY = " ({kind})"
OFFLINE = "📡 Can't reach {host}:{port} — waited {waited} so far; the run continues when it's back."
STORM_WAITING = ("⏳ *Waiting for the model's API*: it failed {failures} times in a row{why}. I'll try again "
                 "every {every} and go on by myself when it answers.")
STORM_BACK = "✅ The model's API answers again; going on."
UNVERIFIABLE = "⚠️ {count}/{total} checks of the goal can't be verified here."
UNVERIFIABLE_SEE = "See `{path}`"

# -- Durations: two units at most ------------------------------------------------------------

DAYS = "{d}d {h:02d}h"
HOURS = "{h}h {m:02d}m"
MINUTES = "{m}m {s:02d}s"
SECONDS = "{s}s"

# -- Spend limits: the pause, the warning, ``@flower /limit`` (bot.render.limit_notices) --------------

LIMIT_WHAT = {"request": "this request", "thread": "this thread", "channel": "this channel this month",
              "user": "the person who asked, this month", "month": "flower, this month"}
LIMIT_REACHED = "⏸️ *Paused:* {what} reached its spend limit of {limit} ({spent} spent). Nothing is lost."
LIMIT_RAISE = "{who} can raise it with `@flower /limit {scope} <dollars>`; then reply here to go on."
LIMIT_RAISE_ENV = ("Nobody may raise it from Slack (`FLOWER_ADMINS` is empty): whoever runs flower can raise "
                   "`{env}`; then reply here to go on.")
GO_ON_BUTTON = "Go on"  # under the pause: once the limit is raised
NEAR_LIMIT = "⚠️ {what} has spent {spent} of its {limit} limit."
LIMITS_HEAD = "*Spend limits here*"
LIMIT_LINE = "• {what}: {spent} of {limit}"
NO_LIMIT = "no limit"
LIMITS_HOW = "Admins change one with `@flower /limit <request|thread|channel|user|month> <dollars|off>`."
LIMIT_SET = ":white_check_mark: {who} set the limit of {what} to {limit} in this channel."
LIMIT_REMOVED = ":white_check_mark: {who} removed this channel's own limit of {what}: the default applies ({limit})."
LIMIT_ADMINS_ONLY = "Sorry {who}, only admins (FLOWER_ADMINS) may change a spend limit."
LIMIT_BAD = "That is not a limit I can set: {why}. Write `@flower /limit <request|thread|channel|user|month> <dollars|off>`."
LIMIT_BAD_SCOPE = "there is no scope {scope!r}"
LIMIT_OPERATORS_ONLY = ("Sorry {who}, the `{scope}` limit counts spend in every channel: only flower's own admins "
                        "(`FLOWER_ADMINS`, or `admins` under `[defaults]` in the policy) may raise or remove it. "
                        "It stays at {limit}; a channel's admins may lower it here (to {limit} or less).")
HOME_MINE = "*Your runs*"
HOME_NONE = "You have not started a run yet: mention @flower in a channel with one sentence of what to do."
HOME_RUN = "{state} · <{link}|{ask}> · {cost}"
HOME_RUN_PLAIN = "{state} · {ask} · {cost}"
HOME_MONTH = "*This month's spend*"
HOME_BY_CHANNEL = "By channel"
HOME_BY_PERSON = "By person"
HOME_SPENT = "• {who}: {spent}{limit}"
HOME_OF_LIMIT = " of {limit}"
HOME_NOTHING_SPENT = "Nothing spent yet this month."
POLICY_HEAD = "*The settings in effect in this channel*"
POLICY_LINE = "• `{key}`: {value}"
POLICY_UNSET = "none"
POLICY_EVERYONE = "whoever the bot lets in"
POLICY_DEFAULT_MODEL = "Claude Code's default"
POLICY_AS_SET = "the bot's FLOWER_AGENT_ENV"
POLICY_REFUSED = "⚠️ The policy file's last edit was refused, so the one before it is in force: {error}"
POLICY_ADMINS_ONLY = "Sorry {who}, only admins (FLOWER_ADMINS, or the channel's policy) may see its settings."

# -- Long text cut for Slack -----------------------------------------------------------------

MORE_NOT_SHOWN = "_… {left:,} more characters not shown._"

# -- Words the bot could not record: bot.db or the workspaces folder refused (bot.inbound.gate) --

CANNOT_TAKE = (":warning: I can't take this right now: {why}. Nothing of it was recorded; try again in a "
               "minute (the bot's log says more).")
CANNOT_TAKE_WHY = {  # (where, fault) of bot.store.faults.StorageFault
    ("database", "busy"): "the bot's database is busy",
    ("database", "full"): "the disk under the bot's database is full",
    ("database", "read-only"): "the bot's database is read-only",
    ("database", "gone"): "the bot's database file is gone, and the bot is restarting",
    ("database", "broken"): "the bot's database cannot be written",
    ("workspaces", "full"): "the disk under the workspaces folder is full",
    ("workspaces", "read-only"): "the workspaces folder is read-only",
    ("files", "full"): "the disk is full",
    ("files", "read-only"): "a folder the bot writes to is read-only",
}
CANNOT_TAKE_ANY = "the bot's storage cannot be written"  # a (where, fault) not listed above
# a command stopped by a link or FIFO a run made, which the bot does not follow (bot.render.failures)
REFUSED = {"archive": "⚠️ I couldn't archive the last run: {reason}", "other": "⚠️ I couldn't do that: {reason}"}
REFUSED_REASON = "a file in this thread's workspace {why}. Remove it (`{entry}`) or start a new thread."  # a run's too
REFUSED_REASON_UNNAMED = "something in this thread's workspace {why}. Remove it or start a new thread."
REFUSED_WHY = {"link": "is a link, which I don't follow", "fifo": "is a FIFO (a named pipe), which I never open",
               "other": "is not what belongs there (a special file, or a file where a folder goes)",
               "slow": "takes too long to read (a huge or very deep tree of folders, perhaps)"}

# -- The goal's checklist message (bot.render.plan) ------------------------------------------

PLAN_TITLE = "The goal's checks ({n})"  # before any check is judged
PLAN_TITLE_JUDGED = "The goal's checks: {passed} of {n} passed"
PLAN_FIRST_SHOWN = " (first {shown} shown)"  # after the title, when there are too many checks to show
PLAN_CHECK = "Check {n}"  # a check with no text
PLAN_STATE = {"pending": "Not judged yet", "passed": "Passed", "failing": "Failing",
              "unverifiable": "Cannot be verified here"}
PLAN_STOPPED = "Stopped before it was judged"  # a pending check of a run that was stopped

# -- Feedback buttons under the final message (bot.render.controls) --------------------------

FEEDBACK_LABEL = {"positive": "👍", "negative": "👎"}
FEEDBACK_SAY = {"positive": "Good result", "negative": "Bad result"}  # what a screen reader says
FEEDBACK_THANKS = "Thanks for the feedback {label}: it is recorded."
FEEDBACK_CHANGED = "Feedback changed to {label}. Thanks for telling us."  # a second click
FEEDBACK_NOT_RECORDED = ("Your feedback could not be recorded (the bot's database refused it). "
                         "Please click again in a minute.")

# -- Files shared in a thread, and files a run leaves in its outbox (bot.outbound.files_in, files_out) --

FILES_NOT_OPENED = "📎 Not opened:"  # one FILE_LINE follows for each file flower did not take
FILES_NOT_POSTED = "📎 Not posted from the outbox:"  # one FILE_LINE follows for each file left there
FILE_LINE = "• `{name}` {reason}"  # {reason} is one of the FILE_ sentences below
FILES_MORE = "• … and {n:,} more"  # after the first FILE_LINEs: a run can leave 100,000 files
FILE_TOO_MANY = "is past the first {max} files of the message; flower opens at most {max} a message"
FILE_TOO_BIG = "is {size}; the limit is {limit} (`FLOWER_FILE_MAX_MB`)"
FILE_GREW = "is larger than the {limit} limit (`FLOWER_FILE_MAX_MB`), more than it said"
FILE_KIND = Sentence("is a kind of file flower does not open ({kind})")
FILE_NOT_AS_SAID = "is not {kind}, though it says it is"
FILE_KIND_NAMES = {"image": "an image", "pdf": "a PDF", "archive": "an archive", "text": "text"}
FILE_PROGRAM = "is a program, which flower does not open"
FILE_NO_LINK = "has no download link on Slack"
FILE_NO_INFO = Sentence("could not be looked up on Slack (`files.info`: {error})")
FILE_FOREIGN = Sentence("is not on Slack's file host ({host}), so flower did not fetch it")
FILE_HTTP = "could not be downloaded: Slack answered HTTP {status}"
FILE_SCOPE_HINT = " (the app may lack the `files:read` scope)"  # after FILE_HTTP for a 401 or 403
FILE_SIGN_IN = "came back as Slack's sign-in page, not the file (the app may lack the `files:read` scope)"
FILE_UNREACHABLE = Sentence("could not be downloaded: {error}")
FILE_NOT_SAVED = "could not be saved: the workspace's `.flower/inbox` is a link or not a folder"
FILE_SAVE_FAILED = Sentence("could not be saved in the workspace: {error}")
FILE_IS_LINK = "is a link; only plain files are posted"
FILE_IS_FOLDER = "is a folder; only the files directly in the outbox are posted"
FILE_NOT_PLAIN = "is not a plain file"
FILE_HARD_LINKED = "has other hard links, so it may be a file from elsewhere; put a copy there instead"
FILE_HIDDEN = "is hidden (its name starts with a dot)"
FILE_EMPTY = "is empty"
FILE_TOO_MANY_OUT = "is past the first {max} files; it is posted next time"
FILE_PAST_LOOKED = ("is past the first {max} files of the outbox, more than flower opens, so it is not posted "
                    "(move the files already posted out of the outbox)")
FILE_OUTBOX_UNSAFE = "is a link or not a folder, so nothing in it was posted"  # said of `.flower/outbox`
FILE_UPLOAD_FAILED = Sentence("could not be uploaded: {error}")
FILE_UNREADABLE = Sentence("could not be read: {error}")
