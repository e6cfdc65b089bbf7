"""Scripted players for the built-in tasks (a succeeding and a failing one per task and mode)."""

from toolmode.bench.players import api, files, web
from toolmode.bench.players.base import Call, Code, Play, Player, PlayerError, script_for

PLAYERS: dict[str, Player] = {
    "log_stats": files.log_stats,
    "csv_sales": files.csv_sales,
    "config_scan": files.config_scan,
    "orders_cn": files.orders_cn,
    "write_report": files.write_report,
    "log_diagnosis": files.log_diagnosis,
    "time_and_title": web.time_and_title,
    "site_browse": web.site_browse,
    "currency_total": api.currency_total,
    "tariffs": api.tariffs,
    "api_multihop": api.api_multihop,
    "team_payroll": api.team_payroll,
    "tool_catalog": api.tool_catalog,
}

__all__ = ["PLAYERS", "Call", "Code", "Play", "Player", "PlayerError", "script_for"]
