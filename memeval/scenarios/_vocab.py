"""Words the synthetic generator builds memories and queries from.

Kept apart from the generator's logic so the vocabulary can grow without touching
how labels are derived. Lists are tuples: their order is part of the seed contract
(changing them changes every generated scenario, so do it on purpose).
"""

from __future__ import annotations

# Entity names are <adjective>-<noun> (and a third part once those run out).
ADJECTIVES = (
    "amber", "azure", "brisk", "cobalt", "coral", "crimson", "dusky", "ember", "fallow",
    "frosty", "gilded", "granite", "hazel", "indigo", "ivory", "jade", "keen", "lunar",
    "maple", "misty", "nimble", "ochre", "opal", "pewter", "quiet", "rapid", "russet",
    "sable", "scarlet", "silver", "slate", "solar", "tawny", "umber", "velvet", "verdant",
    "vivid", "wild", "wintry", "zesty",
)
NOUNS = (
    "badger", "beacon", "bison", "canyon", "comet", "condor", "cypress", "delta", "falcon",
    "fjord", "gecko", "glacier", "harbor", "heron", "ibis", "jackal", "kestrel", "lagoon",
    "lynx", "marmot", "meadow", "mesa", "narwhal", "orchid", "osprey", "otter", "panther",
    "pelican", "quarry", "raven", "reef", "sparrow", "summit", "tundra", "vale", "walrus",
    "willow", "yak", "zebra", "zephyr",
)
SUFFIXES = ("prime", "north", "south", "east", "west", "core", "edge", "lite", "max", "one")

# slug -> (noun phrase used in descriptions and queries, details a memory can state)
TOPICS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("deploy", "deployment", (
        "blue-green switch behind the load balancer, never in-place",
        "needs a change ticket for anything shipped after Thursday noon",
        "every build sits in the canary stage for thirty minutes first",
        "rollbacks go through the previous image tag, not a revert commit",
    )),
    ("tests", "test suite", (
        "integration tests hit a real Postgres container, mocks are not accepted",
        "flaky specs are quarantined with a ticket instead of retried",
        "the slow suite runs nightly; pull requests run the fast subset",
        "fixtures are built with factories, shared seed files were dropped",
    )),
    ("migrations", "database migrations", (
        "every migration must be reversible and reviewed by the data team",
        "large tables are altered online with batched backfills",
        "schema changes ship one release before the code that needs them",
        "no migration may lock a table for more than two seconds",
    )),
    ("auth", "login tokens", (
        "access tokens live fifteen minutes, refresh tokens thirty days",
        "tokens are signed with rotating keys published at the JWKS endpoint",
        "service accounts use client credentials, never personal tokens",
        "sessions are revoked on password change across all devices",
    )),
    ("cache", "caching layer", (
        "Redis keys carry a version prefix so deploys invalidate cleanly",
        "cache entries expire after ten minutes unless pinned",
        "writes go through the cache, reads fall back to the replica",
        "the cache is warmed by a job right after each deploy",
    )),
    ("logging", "log format", (
        "logs are JSON lines with a request id on every entry",
        "personal data is masked before it reaches the log shipper",
        "debug logging is sampled at one percent in production",
        "error logs link the trace id so the tracing view opens directly",
    )),
    ("metrics", "metrics dashboards", (
        "latency panels show p50, p95 and p99 per endpoint",
        "alerts fire on error budget burn, not on single spikes",
        "business counters are exported under a separate namespace",
        "dashboards are provisioned from code, hand edits get overwritten",
    )),
    ("queue", "job queue", (
        "critical jobs run on their own queue with dedicated workers",
        "jobs must be idempotent because retries happen at least once",
        "dead letters are reviewed every morning by the on-duty engineer",
        "long exports are chunked so no job runs longer than five minutes",
    )),
    ("api", "REST endpoints", (
        "breaking changes need a new version prefix and a deprecation header",
        "pagination is cursor based, offset paging was removed",
        "every endpoint documents its rate limit in the OpenAPI file",
        "errors follow the problem-details format with a stable code",
    )),
    ("config", "configuration flags", (
        "feature flags are cleaned up within two sprints of full rollout",
        "secrets never go in flag values, only in the vault",
        "defaults live in code; environment overrides are listed in one file",
        "flag changes in production need a second approver",
    )),
    ("release", "release branches", (
        "release branches are cut every second Tuesday",
        "hotfixes land on main first and are cherry-picked back",
        "release notes are generated from pull request labels",
        "a release is frozen two days before the cut",
    )),
    ("perf", "performance budget", (
        "page loads must stay under two seconds on the reference laptop",
        "any query above one hundred milliseconds needs an index review",
        "bundle size may grow by at most five percent per release",
        "load tests run against staging before every major launch",
    )),
    ("secrets", "secret handling", (
        "secrets rotate every ninety days through the vault",
        "local development uses dummy secrets from the sample env file",
        "leaked credentials are revoked first and investigated second",
        "build logs are scrubbed of anything that looks like a key",
    )),
    ("search", "search index", (
        "the index is rebuilt nightly and patched incrementally in between",
        "synonyms are maintained by the content team in a shared sheet",
        "relevance tweaks are checked against the saved query set",
        "deleted records are tombstoned for a day before purge",
    )),
    ("email", "email templates", (
        "templates are written in MJML and compiled during the build",
        "transactional mail goes through a separate sending domain",
        "every template has a plain-text twin",
        "marketing mail honours the global unsubscribe list",
    )),
    ("billing", "invoice totals", (
        "amounts are stored in minor units, floats are forbidden",
        "rounding happens once per line, never on the total",
        "tax rates come from the tax service, not from config",
        "credit notes reference the original invoice number",
    )),
    ("i18n", "translations", (
        "strings are extracted on merge and sent to the vendor weekly",
        "plural rules use ICU message format",
        "untranslated strings fall back to English, never to keys",
        "right-to-left layouts are checked in the visual tests",
    )),
    ("uploads", "file uploads", (
        "uploads go straight to object storage with signed URLs",
        "files above fifty megabytes are rejected at the edge",
        "every upload is virus scanned before it becomes visible",
        "thumbnails are generated lazily on first view",
    )),
    ("build", "build pipeline", (
        "the pipeline caches dependencies keyed by the lockfile hash",
        "builds are reproducible, timestamps are stripped from artifacts",
        "main must stay green; a red build blocks merges",
        "container images are scanned and signed before publishing",
    )),
    ("deps", "dependency upgrades", (
        "minor upgrades are batched weekly by the update bot",
        "major upgrades get their own branch and a soak period",
        "pinned versions carry a comment explaining the pin",
        "licences of new dependencies are checked before adoption",
    )),
)

MEMORY_TYPES = ("project", "feedback", "reference", "user")
TYPE_WEIGHTS = (4, 3, 2, 1)
TYPE_LABELS = {"project": "decision", "feedback": "rule", "reference": "pointer",
               "user": "preference"}

WHYS = (
    "an outage last quarter traced back to skipping this",
    "the team agreed on it in the last retrospective",
    "auditors asked for it explicitly",
    "it keeps on-call load predictable",
    "the previous approach cost hours of debugging",
)
APPLIES = (
    "mention it in the pull request description when it applies",
    "check it before starting the change, not after review",
    "point newcomers to this note when they ask",
    "treat exceptions as a team decision, not a personal one",
)

# Singletons for paraphrase turns: (slug, description, query). The query shares no
# content word with the slug or the description (a test checks this), yet asks for
# exactly what the memory holds.
CONCEPTS: tuple[tuple[str, str, str], ...] = (
    ("oncall-swaps", "on-call rotation swaps need a manager's approval",
     "who must agree before I trade my night pager shift with a colleague?"),
    ("code-freeze", "code freeze during the last week of December",
     "can I merge things between Christmas and New Year?"),
    ("expense-limit", "expense claims above 500 EUR require finance sign-off",
     "how much can I spend on a conference ticket before someone has to approve it?"),
    ("laptop-policy", "company laptops must use full-disk encryption",
     "does my work notebook need its drive scrambled?"),
    ("vpn-required", "production consoles are reachable only through the VPN",
     "why can't I open the prod admin pages from the café wifi?"),
    ("meeting-free", "Wednesdays are kept free of meetings",
     "which weekday should I avoid when I book a sync with the team?"),
    ("timezone-standups", "standups happen at 09:30 Berlin time",
     "what hour is the daily check-in for people in Lisbon?"),
    ("style-guide", "prose documentation follows the Google developer style guide",
     "which writing rules apply when I author docs pages?"),
    ("interview-loop", "hiring loops include a pairing exercise and a system design round",
     "what steps does a candidate go through before we make an offer?"),
    ("backup-restore", "backups are restored quarterly as a drill",
     "how often do we practise bringing data back after a disaster?"),
    ("incident-postmortem", "postmortems are blameless and published within five days",
     "after an outage, how soon should the write-up be out, and who gets blamed?"),
    ("accessibility", "UI work must meet WCAG 2.1 AA contrast",
     "how dark must text be against its background on new screens?"),
    ("open-source", "contributions to outside projects need legal review",
     "may I send a patch upstream to a library we use?"),
    ("customer-data", "customer data never leaves the EU region",
     "can we copy user records to a bucket in Virginia for analysis?"),
    ("pairing-hours", "the user prefers pairing sessions in the morning",
     "when is a good slot to sit together and program jointly?"),
    ("review-size", "pull requests should stay below 400 changed lines",
     "how big may a diff be before reviewers push back?"),
    ("naming", "services are named after birds, libraries after trees",
     "what should I call the new microservice?"),
    ("support-rota", "engineers join the support rota one day per month",
     "how frequently will I answer helpdesk tickets?"),
    ("vendor-contacts", "vendor escalations go through the procurement mailbox",
     "who do I write to if a supplier misses their SLA?"),
    ("license-keys", "software licence keys are kept in the shared password manager",
     "where can I find the activation code for the IDE we bought?"),
    ("travel-booking", "business trips are booked through the travel portal only",
     "how do I arrange flights and hotels for the offsite?"),
    ("holiday-cover", "holidays longer than a week need a named stand-in",
     "I'm off for a fortnight in August; what has to be arranged first?"),
    ("design-tokens", "colours and spacing come from design tokens, never hex values",
     "can I just paste #ff0000 into the stylesheet?"),
    ("analytics-consent", "analytics events fire only after cookie consent",
     "may tracking start before visitors accept the banner?"),
    ("mobile-support", "the app supports the last three iOS and Android versions",
     "which phone operating system releases still have to work?"),
    ("demo-env", "sales demos run on the isolated showcase environment",
     "where should I point a prospect who wants to try things out?"),
    ("sla-response", "priority-one tickets get a first response within fifteen minutes",
     "how fast must we reply when a big client reports the site down?"),
    ("docs-location", "architecture decision records live in the adr folder",
     "where do we write down why we chose one approach over another?"),
    ("answer-style", "the user likes answers short and without preamble",
     "how verbose should replies to me be?"),
    ("data-retention", "raw event data is deleted after thirteen months",
     "how long do we keep clickstream logs before purging them?"),
)

# Recent-tool-docs material: (tool name, short name, usage doc, gotcha, question).
TOOLS: tuple[tuple[str, str, str, str, str], ...] = (
    ("mcp__sentry__search_issues", "sentry-search",
     "how to call the Sentry search tool, its parameters and example filters",
     "Sentry search tool returns only the last 24 hours and at most 100 events by default",
     "sentry shows just a few events for this error, is it really that rare?"),
    ("mcp__linear__create_issue", "linear-issues",
     "how to use the Linear issue tool, fields and team keys",
     "Linear tool silently drops labels that do not exist in the target team",
     "the ticket I filed is missing its labels, what happened?"),
    ("mcp__github__create_pull_request", "github-prs",
     "how to open pull requests with the GitHub tool, arguments and examples",
     "GitHub tool opens pull requests as drafts unless ready is passed explicitly",
     "why does nobody review the pull request I opened an hour ago?"),
    ("mcp__postgres__query", "postgres-query",
     "how to run read queries with the Postgres tool and format results",
     "Postgres tool connects to the replica, which lags up to a minute behind",
     "I inserted a row a moment ago but my select does not return it, why?"),
    ("mcp__grafana__query_prometheus", "grafana-query",
     "how to query Prometheus through the Grafana tool, syntax and ranges",
     "Grafana tool rounds step sizes up, so short spikes disappear from the result",
     "the latency spike everyone saw is not in the numbers I pulled, why?"),
    ("mcp__slack__post_message", "slack-post",
     "how to post messages with the Slack tool, channels and formatting",
     "Slack tool posts as the bot user, which is not a member of private channels",
     "my message to the incident channel never showed up, what went wrong?"),
    ("mcp__jira__search", "jira-search",
     "how to search Jira with the tool, JQL examples and fields",
     "Jira tool caps results at fifty issues without saying so",
     "the count of open bugs I got looks too low, can I trust it?"),
    ("mcp__datadog__search_logs", "datadog-logs",
     "how to search logs with the Datadog tool, query syntax and facets",
     "Datadog tool searches only the default index unless an index is named",
     "the audit log lines I expect are missing from my search, why?"),
)

# Keyword traps: (topic slug, question sharing that topic's word in another sense).
TRAPS: tuple[tuple[str, str], ...] = (
    ("release", "when is the next big video game release this winter?"),
    ("cache", "how do I clear my browser cache on a Mac?"),
    ("queue", "is there a queue at the passport office on Saturdays usually?"),
    ("deploy", "how do armies deploy troops in a Roman legion formation?"),
    ("tests", "what tests does a driving licence exam include in Germany?"),
    ("perf", "how big should the performance budget be for a school theatre play?"),
    ("secrets", "what are the secrets of a good sourdough starter?"),
    ("metrics", "what metrics do marathon runners track during training?"),
    ("search", "how do I search my email inbox for attachments on my phone?"),
    ("build", "how long does it take to build a garden shed from a kit?"),
    ("migrations", "what triggers bird migrations in autumn?"),
    ("billing", "why is my phone billing higher this month than last?"),
    ("uploads", "why are photo uploads to my personal cloud so slow at home?"),
    ("logging", "what permits do I need for logging trees on my own land?"),
    ("i18n", "which translations of the Odyssey read most naturally?"),
    ("email", "what is a polite way to end an email to a professor?"),
)
NONE_QUERIES: tuple[str, ...] = (
    "what's the difference between a list and a tuple in Python?",
    "explain how a hash map handles collisions",
    "write a regular expression that matches an IPv4 address",
    "what does the HTTP 418 status code mean?",
    "how do I reverse a linked list in place?",
    "summarize the CAP theorem in two sentences",
    "what is the time complexity of heapsort?",
    "convert this timestamp to ISO 8601 for me please",
    "how do generics differ between Java and Go?",
    "what is a good name for a variable holding a retry count?",
    "explain tail call optimisation briefly",
    "how does TCP slow start work?",
)

DIRECT_TEMPLATES = (
    "what do we know about the {noun} of {entity}?",
    "I'm about to change the {noun} for {entity}; anything to keep in mind?",
    "remind me how {entity} handles its {noun}",
    "is there a rule about {noun} on {entity} I should follow?",
)
MULTI_TEMPLATES = (
    "I'm reworking {entity}: what matters for its {nouns}?",
    "before I touch the {nouns} of {entity}, what should I remember?",
)
OVER_FIVE_TEMPLATES = (
    "give me everything we have recorded about {entity}",
    "I'm taking over {entity} tomorrow; what do all our notes on it say?",
)
STALE_TEMPLATES = (
    "how is the {noun} of {entity} set up at the moment?",
    "what is the current approach to {noun} on {entity}?",
)
FOLLOW_UP_TEMPLATES = (
    "and for {entity}'s {noun2}, what applies there, besides the {noun1} point?",
    "ok, next the {noun2} of {entity}; the {noun1} part is clear already",
)
TOOL_TEMPLATES = ("I just used the tool; {question}",)

# Agents for `agent-scope` turns, and the memory scopes they get in turn.
AGENT_TYPES = ("code-reviewer", "test-writer", "db-expert", "security-auditor",
               "docs-writer", "perf-tuner")
AGENT_SCOPES = ("user", "project", "local")
AGENT_TEMPLATES = (
    "@agent-{agent} what do you check on the {noun} of {entity}?",
    "@agent-{agent} review the {noun} change for {entity} please",
)
