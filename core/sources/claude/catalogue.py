"""The record types and top-level fields of Claude Code transcripts that Eywa knows: what the real corpus
(1.0.x to 2.1.x) and Claude Code 2.1.332 write (docs/transcripts.md says what Eywa does with each). Anything
else is counted, per CLI version, as drift (`eywa stats`, the bot's /status)."""

from __future__ import annotations

KNOWN_FIELDS: dict[str, frozenset[str]] = {
    "ai-title": frozenset({"aiTitle", "sessionId", "type"}),
    "api-request": frozenset({"agentId", "base", "cacheControl", "echoWireToolInputs", "id", "keep", "params",
        "querySource", "requestDigest", "sessionId", "shapeHash", "tail", "thread", "timestamp", "type", "version"}),
    "api-request-blob": frozenset({"agentId", "hash", "message", "sessionId", "type"}),
    "api-request-shape": frozenset({"agentId", "sessionId", "shape", "shapeHash", "timestamp", "type", "version"}),
    "assistant": frozenset({"agentId", "apiBlockIndex", "attributionAgent", "cwd", "effort", "entrypoint",
        "gitBranch", "isApiErrorMessage", "isMeta", "isSidechain", "isVisibleInTranscriptOnly", "madeBy",
        "message", "parentUuid", "perTurnEffort", "promptCacheRequested", "requestId", "requestRef",
        "requestedModel", "sessionId", "slug", "timestamp", "toolInputStreamMs", "type", "userType", "uuid",
        "version"}),
    "atis-latch": frozenset({"atis", "sessionId", "type"}),
    "attachment": frozenset({"agentId", "attachment", "cwd", "entrypoint", "gitBranch", "isSidechain",
        "parentUuid", "rendered", "renderedBesideToolResult", "renderedRole", "sessionId", "slug", "timestamp",
        "type", "userType", "uuid", "version"}),
    "cost-state": frozenset({"hasUnknownModelCost", "modelUsage", "sessionId", "startTime", "totalAPIDuration",
        "totalAPIDurationWithoutRetries", "totalCostUSD", "totalDuration", "totalLinesAdded", "totalLinesRemoved",
        "totalToolDuration", "type"}),
    "custom-title": frozenset({"customTitle", "sessionId", "type"}),
    "file-history-snapshot": frozenset({"isSnapshotUpdate", "messageId", "snapshot", "type"}),
    "last-prompt": frozenset({"lastPrompt", "leafUuid", "sessionId", "type"}),
    "mode": frozenset({"mode", "sessionId", "type"}),
    "permission-mode": frozenset({"permissionMode", "sessionId", "type"}),
    "pr-link": frozenset({"prNumber", "prRepository", "prUrl", "sessionId", "timestamp", "type"}),
    "progress": frozenset({"cwd", "data", "gitBranch", "isSidechain", "parentToolUseID", "parentUuid", "sessionId",
        "slug", "timestamp", "toolUseID", "type", "userType", "uuid", "version"}),
    "queue-operation": frozenset({"content", "operation", "sessionId", "timestamp", "type"}),
    "summary": frozenset({"leafUuid", "summary", "type"}),
    "system": frozenset({"commandRun", "compactMetadata", "content", "contextUsage", "cwd", "durationMs",
        "entrypoint", "gitBranch", "hasOutput", "hookCount", "hookErrors", "hookInfos", "isMeta", "isSidechain",
        "level", "logicalParentUuid", "messageCount", "microcompactMetadata", "parentUuid",
        "preventedContinuation", "sessionId", "slug", "stopReason", "subtype", "timestamp", "toolUseID", "type",
        "userType", "uuid", "version"}),
    "tools-used": frozenset({"sessionId", "tools", "type"}),
    "user": frozenset({"agentId", "cwd", "entrypoint", "gitBranch", "imagePasteIds", "isApiErrorMessage",
        "isCompactSummary", "isMeta", "isSidechain", "isVisibleInTranscriptOnly", "message", "origin",
        "parentUuid", "permissionDecision", "permissionMode", "planContent", "promptId", "promptSource",
        "queueSkipAttachments", "requestId", "rowSource", "sandboxed", "sentAtMs", "sessionId", "slug",
        "sourceToolAssistantUUID", "sourceToolUseID", "summarizedTurnPromptUuids", "thinkingMetadata", "timestamp",
        "todos", "toolDenialKind", "toolUseResult", "turnCompanion", "turnOrigin", "turnPosition", "type",
        "userType", "uuid", "version"}),
}
# Types with no fixed fields here (their fields are not counted): seen rarely, or only as metadata lines.
KNOWN_TYPES: frozenset[str] = frozenset(KNOWN_FIELDS) | {"agent-name", "agent-color", "result"}
