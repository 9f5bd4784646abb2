"""A fresh process that resumes a session with attachments (tests/test_attachments_sessions.py):
``python attach_child.py STORE ID`` prints what its model was sent, as JSON."""

from __future__ import annotations

import json
import sys

from reactloop import Agent
from reactloop.testing import ScriptedModel

store, session_id = sys.argv[1], sys.argv[2]
model = ScriptedModel(["resumed"])
result = Agent(model=model).session(session_id, store=store).send_sync("And now?")
sent = [[x for a in m.attachments for x in (a.sha256, len(a.data or b""))]
        for m in model.requests[0].messages]
print(json.dumps({"answer": result.output, "sent": sent}))
