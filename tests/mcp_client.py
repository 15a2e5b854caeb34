"""Drives `engine mcp` with the official MCP Python SDK (the `mcp` package from PyPI), as
tests/mcp.rs asks: the handshake, the tool list, every tool, bad and oversized calls, an unknown
tool, a cancelled call. Prints one JSON object of observations; tests/mcp.rs judges them.

The SDK checks every result that is not an error against its tool's outputSchema (from the tool
list) and raises when it does not conform; such a call is reported with `schema_error`, and a
result tampered with on purpose shows the check is on.

    python mcp_client.py ENGINE PROJECT LOGDIR

Each session's server runs as `tee in.log | ENGINE mcp 2>err.log | tee out.log` in a directory of
LOGDIR named after the session (`auto`, `legacy`), so the test can check every byte it wrote to
stdout, and what the client sent.
"""

import json
import os
import sys

import warnings

import anyio
from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters

# Pinging is deprecated in the protocol's next revision; this server speaks the current one.
warnings.simplefilter("ignore", MCPDeprecationWarning)

engine, project, logdir = sys.argv[1:4]
report = {}


def params(session):
    logs = os.path.join(logdir, session)
    os.makedirs(logs, exist_ok=True)
    return StdioServerParameters(
        command="sh",
        args=["-c", 'tee "$1/in.log" | "$0" mcp 2>"$1/err.log" | tee "$1/out.log"', engine, logs],
        cwd=project,
    )


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def outcome(result):
    """What a tool call gave: its error flag, text and structured content."""
    return {"error": bool(result.is_error), "text": text(result), "structured": result.structured_content}


async def call(client, name, arguments, **kw):
    try:
        return outcome(await client.call_tool(name, arguments, **kw))
    except MCPError as e:
        return {"protocol_error": e.error.code, "message": e.error.message}
    except RuntimeError as e:
        # What the SDK raises when structured content breaks the tool's outputSchema.
        return {"schema_error": str(e)}


async def rejects(client, name, result):
    """Whether the SDK's output-schema check refuses `result` as an answer of tool `name`."""
    try:
        await client.session.validate_tool_result(name, result)
    except RuntimeError:
        return True
    return False


async def main():
    # mode="auto" (the SDK's default): probes server/discover, falls back to initialize.
    async with Client(params("auto"), read_timeout_seconds=120) as client:
        report["protocol_version"] = client.protocol_version
        report["server_name"] = client.server_info.name if client.server_info else None
        report["instructions"] = client.instructions
        report["tools_capability"] = client.server_capabilities.tools is not None

        # Cancelled while the server still loads the model: the call is queued, then dropped.
        finished = None
        with anyio.move_on_after(0.02):
            finished = await client.call_tool("search", {"query": "cancelled while queued"})
        report["cancel_finished"] = finished is not None

        tools = (await client.list_tools()).tools
        report["tools"] = {
            t.name: {"description": t.description, "schema": t.input_schema, "output_schema": t.output_schema, "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None}
            for t in tools
        }

        report["search"] = await call(client, "search", {"query": "why did we move sessions to redis?", "k": 3})
        report["search_unanswerable"] = await call(client, "search", {"query": "how do I bake sourdough bread?", "k": 3})
        report["search_no_hits"] = await call(client, "search", {"query": "zzqxv", "mode": "bm25", "kind": "memory"})
        report["search_timings"] = await call(client, "search", {"query": "upload quota", "k": 1, "timings": True})
        # The check is on: the real answer passes, the same answer with a field it does not
        # declare, or without its results, does not.
        real = await client.call_tool("search", {"query": "upload quota", "k": 1})
        report["schema_accepts_real"] = not await rejects(client, "search", real)
        extra = real.model_copy(update={"structured_content": {**real.structured_content, "answers": False}})
        missing = real.model_copy(update={"structured_content": {"next": "x"}})
        report["schema_rejects_tampered"] = await rejects(client, "search", extra) and await rejects(client, "search", missing)
        report["search_filtered"] = await call(client, "search", {"query": "session expiry", "kind": "code", "path": "src/"})
        report["search_docs"] = await call(client, "search", {"query": "session expiry", "kind": "docs"})
        report["search_no_query"] = await call(client, "search", {})
        report["search_bad_k"] = await call(client, "search", {"query": "redis", "k": 0})
        report["search_unknown_argument"] = await call(client, "search", {"query": "redis", "top_k": 3})
        report["search_long_query"] = await call(client, "search", {"query": "word " * 1000})

        first = (report["search"].get("structured") or {}).get("results", [{}])[0].get("id")
        report["get_id"] = await call(client, "get", {"id": first})
        report["get_neighbours"] = await call(client, "get", {"id": "src/session_store.rs#21", "neighbours": 1})
        report["get_lines"] = await call(client, "get", {"path": "src/quota.ts", "start_line": 3, "end_line": 8})
        report["get_budget"] = await call(client, "get", {"path": "docs/runbook.md", "max_tokens": 100})
        report["get_outside"] = await call(client, "get", {"path": "../../../etc/passwd"})
        report["get_absolute_outside"] = await call(client, "get", {"path": "/etc/passwd"})
        report["get_not_indexed"] = await call(client, "get", {"path": "nothing/here.rs"})
        report["get_stale_id"] = await call(client, "get", {"id": "src/quota.ts#999999"})

        report["remember"] = await call(client, "remember", {
            "title": "Thumbnails are WebP since November",
            "content": "We switched thumbnails from JPEG to WebP: they are 30% smaller and every browser we support reads them.",
            "category": "decision",
            "tags": ["thumbnails", "images"],
        })
        saved = (report["remember"].get("structured") or {}).get("path")
        if saved:
            with open(os.path.join(project, saved)) as f:
                report["remember_file"] = json.load(f)
        report["remember_again"] = await call(client, "remember", {
            "title": "Thumbnails are WebP since November",
            "content": "We switched thumbnails from JPEG to WebP: they are 30% smaller and every browser we support reads them.",
            "category": "decision",
        })
        report["search_remembered"] = await call(client, "search", {"query": "which image format do thumbnails use?", "kind": "memory", "k": 3})
        report["recent"] = await call(client, "recent", {})
        report["recent_decisions"] = await call(client, "recent", {"category": "decision", "limit": 50})
        report["remember_secret"] = await call(client, "remember", {"title": "CI token", "content": "ghp_0123456789abcdefghijABCDEFGHIJ012345"})
        report["remember_bad_category"] = await call(client, "remember", {"title": "x", "content": "y", "category": "Not a category"})
        new_id = (report["remember"].get("structured") or {}).get("id")
        report["forget"] = await call(client, "forget", {"id": new_id})
        report["forget_again"] = await call(client, "forget", {"id": new_id})
        report["recent_after_forget"] = await call(client, "recent", {"category": "decision"})
        report["search_after_forget"] = await call(client, "search", {"query": "which image format do thumbnails use?", "kind": "memory", "k": 3})

        report["unknown_tool"] = await call(client, "nope", {})
        # 6 MB: over the server's 4 MiB line limit. The server still finds the request's id, so
        # the call fails at once instead of waiting.
        report["oversized"] = await call(client, "search", {"query": "x " * 3_000_000}, read_timeout_seconds=60)
        report["after_all"] = await call(client, "search", {"query": "quota for uploads", "k": 1})

    # Claude Code's way in: the initialize handshake, no probe.
    async with Client(params("legacy"), mode="legacy", read_timeout_seconds=120) as client:
        report["legacy_protocol_version"] = client.protocol_version
        await client.send_ping()
        report["legacy_ping"] = True
        report["legacy_search"] = await call(client, "search", {"query": "thumbnail purge", "k": 2, "mode": "bm25"})


anyio.run(main)
print(json.dumps(report))
