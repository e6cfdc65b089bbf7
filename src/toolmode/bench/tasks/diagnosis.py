"""Judgement on content: which service in the logs is failing, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolmode.bench.parse import mentions
from toolmode.bench.task import CheckResult, Task
from toolmode.bench.tasks.common import builtins, hide_builtins_except, rng

SERVICES = ["gateway", "checkout", "inventory", "notifier", "ledger", "profile"]
# cause id -> (log lines that show it, words an answer may use to name it)
CAUSES: dict[str, tuple[list[str], list[str]]] = {
    "pool": (
        [
            "db pool: timeout acquiring connection (active=50 max=50)",
            "request failed: connection pool exhausted",
        ],
        ["pool", "connection pool", "too many connections", "连接池"],
    ),
    "disk": (
        ["write /var/data/segment.tmp: No space left on device", "flush failed: disk full"],
        ["disk", "no space", "space", "storage", "磁盘"],
    ),
    "cert": (
        [
            "TLS handshake to bank-api failed: x509: certificate has expired",
            "upstream TLS error: certificate expired",
        ],
        ["certificate", "cert", "x509", "证书"],
    ),
    "oom": (
        ["worker killed: OOMKilled (memory limit 512Mi)", "java.lang.OutOfMemoryError: Java heap space"],
        ["memory", "oom", "heap", "内存"],
    ),
    "dns": (
        ["dial tcp: lookup payments.internal: no such host", "DNS resolution failed for payments.internal"],
        ["dns", "resolution", "no such host", "lookup", "域名", "解析"],
    ),
}
_NOISE = [
    "INFO request ok path=/health ms=3",
    "INFO request ok path=/api/v2/items ms=41",
    "DEBUG cache hit ratio=0.93",
    "WARN slow request ms=1250 path=/api/v2/search",
    "INFO config reloaded",
]


def build_diagnosis(workspace: Path, seed: int) -> dict[str, Any]:
    """One log per service; one service fails repeatedly with one cause, others have a stray error."""
    r = rng("log_diagnosis", seed)
    failing = r.choice(SERVICES)
    cause = r.choice(sorted(CAUSES))
    (workspace / "logs").mkdir(parents=True, exist_ok=True)
    for svc in SERVICES:
        lines = [f"2026-11-30T10:{i:02d}:00Z {r.choice(_NOISE)}" for i in range(r.randint(25, 35))]
        if svc == failing:
            for k in range(r.randint(8, 12)):
                pos = r.randint(len(lines) // 3, len(lines))
                lines.insert(pos, f"2026-11-30T10:{40 + k:02d}:00Z ERROR {r.choice(CAUSES[cause][0])}")
        elif r.random() < 0.5:
            lines.insert(
                r.randint(0, len(lines)),
                "2026-11-30T10:05:00Z ERROR request failed: client closed connection",
            )
        (workspace / "logs" / f"{svc}.log").write_text("\n".join(lines) + "\n")
    return {"service": failing, "cause": cause, "keywords": CAUSES[cause][1]}


def check_diagnosis(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The failing service is named, and a word for its cause appears."""
    if not mentions(answer, facts["service"]):
        return CheckResult(False, f"failing service {facts['service']} not named")
    if not any(mentions(answer, k) for k in facts["keywords"]):
        return CheckResult(False, f"cause ({facts['cause']}) not named")
    return CheckResult(True, f"{facts['service']}: {facts['cause']}")


def diagnosis_tasks() -> list[Task]:
    """The log-judgement task."""
    return [
        Task(
            name="log_diagnosis",
            kind="judgement",
            prompt=(
                "logs/ holds one log file per service. One service is failing. Which one, and what is the "
                "cause? Answer in one or two sentences."
            ),
            build=build_diagnosis,
            tools=builtins,
            check=check_diagnosis,
            hidden=hide_builtins_except("list_dir", "read_file", "run_shell"),
            direct=["list_dir"],
        )
    ]
