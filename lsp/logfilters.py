"""Log records that a library logs louder than they deserve, put at their right level."""
from __future__ import annotations

import logging

LATE_CANCEL = "Cancel notification for unknown message id"
PYGLS_JSON_RPC = "pygls.protocol.json_rpc"


class LateCancel(logging.Filter):
    """pygls warns when the client cancels a request it has already answered. That is normal (a
    hover the mouse has left, answered before the cancel arrived), so it is a DEBUG record: kept
    only where the logger logs DEBUG (``msmap lsp --log-level TRACE``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not (isinstance(record.msg, str) and record.msg.startswith(LATE_CANCEL)):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def install() -> None:
    """Attach the filters to the loggers they concern (once)."""
    logger = logging.getLogger(PYGLS_JSON_RPC)
    if not any(isinstance(f, LateCancel) for f in logger.filters):
        logger.addFilter(LateCancel())
