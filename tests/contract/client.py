#!/usr/bin/env python3
"""A client of the delegation service written from the published wire contract alone.

Python 3 standard library only: urllib for HTTP and a raw-socket NATS subscriber (the plain
NATS text protocol, core subscriptions, no JetStream, nothing from taskline). It walks every row
of the contract table with the contract's exact example payloads and checks every answer, then
the events on the subjects named after the agents.

    python3 client.py --base http://127.0.0.1:8787 --key <bearer key> [--nats 127.0.0.1:4222]
                      [--target-key <key acting as agentB>] [--subject-prefix P]

Prints one line per check ("PASS name" / "FAIL name: why") and a last line "RESULT <passed>
<failed>"; exits 0 only when every check passed. Every wait is bounded (--timeout seconds).
"""

import argparse
import json
import queue
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

CREATE = {
    "task_id": "task123",
    "sub_task_id": "sub456",
    "workflow_level": 1,
    "delegation_type": "manual",
    "target_subject_id": "agentB",
    "sender_subject_id": "agentA",
    "sub_task_data": {"key": "value"},
}
STATUS = {"state": "in_progress", "time": 1717390000, "deadline": 1717400000}
RESULT = {"state": "done", "delegation_result": "Execution completed successfully"}
RECORD_FIELDS = {
    "delegation_id",
    "task_id",
    "sub_task_id",
    "workflow_level",
    "delegation_type",
    "target_subject_id",
    "sender_subject_id",
    "status",
    "sub_task_data",
}


class Nats:
    """A minimal core-NATS subscriber over a raw TCP socket (the client protocol, text)."""

    def __init__(self, address, subjects, timeout):
        host, _, port = address.replace("nats://", "").partition(":")
        self.sock = socket.create_connection((host, int(port or 4222)), timeout=timeout)
        self.file = self.sock.makefile("rb")
        self.messages = queue.Queue()
        self.pong = threading.Event()
        info = self.file.readline()
        if not info.startswith(b"INFO "):
            raise RuntimeError(f"not a NATS server: {info!r}")
        connect = {"verbose": False, "pedantic": False, "name": "contract-client", "lang": "python", "version": "1", "protocol": 1}
        self.send(f"CONNECT {json.dumps(connect)}\r\n")
        for sid, subject in enumerate(subjects, start=1):
            self.send(f"SUB {subject} {sid}\r\n")
        self.sock.settimeout(None)
        threading.Thread(target=self.read, daemon=True).start()
        self.send("PING\r\n")  # the PONG proves the server has the subscriptions
        if not self.pong.wait(timeout):
            raise RuntimeError("no PONG from the NATS server")

    def send(self, text):
        self.sock.sendall(text.encode())

    def read(self):
        try:
            while True:
                line = self.file.readline()
                if not line:
                    return
                if line.startswith(b"MSG "):
                    parts = line.split()
                    size = int(parts[-1])
                    payload = self.file.read(size + 2)[:size]
                    self.messages.put((parts[1].decode(), payload.decode()))
                elif line.startswith(b"PING"):
                    self.send("PONG\r\n")
                elif line.startswith(b"PONG"):
                    self.pong.set()
                elif line.startswith(b"-ERR"):
                    self.messages.put(("-ERR", line.decode().strip()))
        except OSError:
            return

    def wait_for(self, subject, match, timeout):
        """The first message on `subject` whose JSON satisfies `match`, or None after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                got_subject, payload = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if got_subject != subject:
                continue
            try:
                data = json.loads(payload)
            except ValueError:
                continue
            if match(data):
                return data

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Http:
    def __init__(self, base, key, timeout):
        self.base = base.rstrip("/")
        self.key = key
        self.timeout = timeout

    def call(self, method, path, body=None, key=None, raw=None):
        headers = {"Authorization": f"Bearer {key or self.key}", "Content-Type": "application/json"}
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return res.status, json.loads(res.read() or b"null")
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, {"unparsed": text.decode(errors="replace")}


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}: {why}", flush=True)
        return ok


def is_epoch(v):
    return isinstance(v, int) and not isinstance(v, bool) and 1_000_000_000 <= v <= 10_000_000_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--target-key", help="a key acting as agentB for the target's rows")
    ap.add_argument("--nats")
    ap.add_argument("--subject-prefix", default="")
    ap.add_argument("--status-key", default="execution")
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()
    subject = (lambda agent: f"{args.subject_prefix}.{agent}" if args.subject_prefix else agent)
    http = Http(args.base, args.key, args.timeout)
    target_key = args.target_key or args.key
    c = Checks()
    nats = Nats(args.nats, [subject("agentA"), subject("agentB"), subject("agentC")], args.timeout) if args.nats else None
    started = time.time()

    # POST /delegations ------------------------------------------------------------------------
    status, body = http.call("POST", "/delegations", CREATE)
    c.check("create: 2xx", 200 <= status < 300, f"{status} {body}")
    c.check("create: answer", isinstance(body, dict) and body.get("success") is True and body.get("message") == "Delegation created successfully", body)
    created = body.get("data") if isinstance(body, dict) else None
    delegation_id = created.get("delegation_id") if isinstance(created, dict) else None
    if delegation_id is None:  # a client that ignores the addition finds its record by query
        _, found = http.call("POST", "/delegations/query", {"task_id": "task123", "sub_task_id": "sub456"})
        ids = [r["delegation_id"] for r in found.get("data", []) if r.get("sender_subject_id") == "agentA"]
        delegation_id = ids[-1] if ids else None
    if not c.check("create: delegation_id generated", isinstance(delegation_id, str) and len(delegation_id) >= 8, delegation_id):
        print(f"RESULT {c.passed} {c.failed}")
        return 1

    if nats:
        task = nats.wait_for(subject("agentB"), lambda d: d.get("event_data", {}).get("delegation_id") == delegation_id, args.timeout)
        expected = {
            "event_type": "delegation_task",
            "event_data": {"task_id": "task123", "sub_task_id": "sub456", "delegation_id": delegation_id, "data": {"key": "value"}},
            "sender_subject_id": "agentA",
        }
        c.check("event: delegation_task on agentB, exact JSON", task == expected, task)

    # GET /delegations/<id> --------------------------------------------------------------------
    status, body = http.call("GET", f"/delegations/{delegation_id}")
    record = body.get("data") if isinstance(body, dict) else None
    c.check("get: 200 + success", status == 200 and body.get("success") is True, f"{status} {body}")
    c.check("get: record fields", isinstance(record, dict) and set(record) == RECORD_FIELDS, record and sorted(record))
    c.check("get: values", isinstance(record, dict) and all(record.get(k) == v for k, v in CREATE.items()) and record.get("delegation_id") == delegation_id, record)
    c.check("get: status is a map", isinstance(record, dict) and isinstance(record.get("status"), dict), record)

    # PUT /delegations/<id> --------------------------------------------------------------------
    status, body = http.call("PUT", f"/delegations/{delegation_id}", {"workflow_level": 2, "sub_task_data": {"key": "value2"}})
    c.check("update: answer", 200 <= status < 300 and body.get("success") is True and body.get("message") == "Delegation updated successfully", f"{status} {body}")
    _, body = http.call("GET", f"/delegations/{delegation_id}")
    record = body.get("data", {})
    c.check("update: stored", record.get("workflow_level") == 2 and record.get("sub_task_data") == {"key": "value2"} and record.get("task_id") == "task123", record)

    # POST /delegations/query ------------------------------------------------------------------
    status, body = http.call("POST", "/delegations/query", {"target_subject_id": "agentB"})
    data = body.get("data") if isinstance(body, dict) else None
    c.check("query: answer is a list", status == 200 and body.get("success") is True and isinstance(data, list), f"{status} {body}")
    c.check("query: bare filter matches", isinstance(data, list) and delegation_id in [r.get("delegation_id") for r in data] and all(r.get("target_subject_id") == "agentB" for r in data), data)
    operators = [
        ({"workflow_level": {"$gte": 2}, "sub_task_data.key": "value2"}, True),
        ({"workflow_level": {"$gt": 2}}, False),
        ({"workflow_level": {"$lt": 3, "$lte": 2, "$ne": 1}, "delegation_id": {"$eq": delegation_id}}, True),
        ({"delegation_type": {"$in": ["manual", "system"]}, "task_id": {"$nin": ["other"]}}, True),
        ({"sub_task_data.key": {"$exists": True}, "sub_task_data.missing": {"$exists": False}}, True),
        ({"$or": [{"sender_subject_id": "nobody"}, {"sub_task_id": "sub456"}]}, True),
        ({"$and": [{"sender_subject_id": "agentA"}, {"sub_task_id": "other"}]}, False),
    ]
    for i, (flt, should) in enumerate(operators):
        status, body = http.call("POST", "/delegations/query", flt)
        ids = [r.get("delegation_id") for r in body.get("data", [])] if isinstance(body, dict) else []
        c.check(f"query: operators #{i + 1} {json.dumps(flt)}", status == 200 and ((delegation_id in ids) == should), f"{status} {body}")

    # PUT /delegations/<id>/status/<status_key> ------------------------------------------------
    status, body = http.call("PUT", f"/delegations/{delegation_id}/status/{args.status_key}", STATUS, key=target_key)
    c.check("status: answer", 200 <= status < 300 and body.get("success") is True and body.get("message") == "Delegation status updated successfully", f"{status} {body}")
    _, body = http.call("GET", f"/delegations/{delegation_id}")
    stage = body.get("data", {}).get("status", {}).get(args.status_key)
    c.check("status: stored as sent (integer epoch seconds)", stage == STATUS, stage)
    status, body = http.call("POST", "/delegations/query", {f"status.{args.status_key}.deadline": {"$lte": 1717400000}, "delegation_id": delegation_id})
    c.check("query: status.<stage>.* with a time", status == 200 and len(body.get("data", [])) == 1, f"{status} {body}")

    # PUT /delegations/submit_result/<id> ------------------------------------------------------
    status, body = http.call("PUT", f"/delegations/submit_result/{delegation_id}", RESULT, key=target_key)
    c.check("submit_result: answer", 200 <= status < 300 and body.get("success") is True and body.get("message") == "Delegation status updated successfully", f"{status} {body}")
    _, body = http.call("GET", f"/delegations/{delegation_id}")
    status_map = body.get("data", {}).get("status", {})
    result_stage = status_map.get("delegation_result")
    c.check(
        "submit_result: delegation_result in the status map",
        isinstance(result_stage, dict)
        and result_stage.get("state") == "done"
        and result_stage.get("delegation_result") == "Execution completed successfully"
        and is_epoch(result_stage.get("time"))
        and result_stage["time"] >= int(started) - 5,
        status_map,
    )
    c.check("submit_result: every time is integer epoch seconds", all(is_epoch(s.get("time")) for s in status_map.values()), status_map)
    status, body = http.call("POST", "/delegations/query", {"status.delegation_result.state": "done", "delegation_id": delegation_id})
    c.check("query: status.delegation_result.state", status == 200 and len(body.get("data", [])) == 1, f"{status} {body}")

    if nats:
        result = nats.wait_for(subject("agentA"), lambda d: d.get("event_type") == "delegation_result" and d.get("event_data", {}).get("delegation_id") == delegation_id, args.timeout)
        ed = (result or {}).get("event_data", {})
        carried = ed.get("delegation_result", (ed.get("data") or {}).get("delegation_result"))
        c.check(
            "event: delegation_result on agentA",
            result is not None
            and set(result) == {"event_type", "event_data", "sender_subject_id"}
            and result.get("sender_subject_id") == "agentB"
            and carried == "Execution completed successfully",
            result,
        )

    # Re-targeting (PUT target_subject_id) -----------------------------------------------------
    status, body = http.call("POST", "/delegations", CREATE)
    second = (body.get("data") or {}).get("delegation_id") if isinstance(body, dict) else None
    status, body = http.call("PUT", f"/delegations/{second}", {"target_subject_id": "agentC"})
    c.check("update: target_subject_id", 200 <= status < 300 and body.get("success") is True, f"{status} {body}")
    _, body = http.call("GET", f"/delegations/{second}")
    c.check("update: target stored", body.get("data", {}).get("target_subject_id") == "agentC", body)
    if nats:
        moved = nats.wait_for(subject("agentC"), lambda d: d.get("event_data", {}).get("delegation_id") == second, args.timeout)
        c.check("event: the new target gets the task", moved is not None and moved.get("event_type") == "delegation_task", moved)

    # DELETE /delegations/<id> (Content-Type: application/json, no body) -----------------------
    for which, raw in ((delegation_id, None), (second, b"")):
        status, body = http.call("DELETE", f"/delegations/{which}", raw=raw)
        c.check(f"delete: answer ({'no body' if raw is None else 'empty body'})", status == 200 and body == {"success": True, "message": "Delegation deleted successfully"}, f"{status} {body}")
        status, body = http.call("GET", f"/delegations/{which}")
        c.check("delete: gone (4xx, success false, message)", 400 <= status < 500 and body.get("success") is False and isinstance(body.get("message"), str), f"{status} {body}")

    # Errors keep the envelope -----------------------------------------------------------------
    for name, (method, path, payload) in {
        "missing record": ("GET", "/delegations/no-such-delegation", None),
        "invalid create": ("POST", "/delegations", {"task_id": 5}),
        "refused operator $where": ("POST", "/delegations/query", {"$where": "this.a == 1"}),
        "refused operator $regex": ("POST", "/delegations/query", {"task_id": {"$regex": ".*"}}),
        "refused $function": ("POST", "/delegations/query", {"$function": {"body": "return 1", "args": [], "lang": "js"}}),
        "unknown state": ("PUT", "/delegations/submit_result/no-such-delegation", {"state": "finished"}),
    }.items():
        status, body = http.call(method, path, payload)
        c.check(f"error envelope: {name}", 400 <= status < 500 and isinstance(body, dict) and body.get("success") is False and isinstance(body.get("message"), str) and body["message"], f"{status} {body}")
    status, body = http.call("GET", f"/delegations/{delegation_id}", key="wrong-key-0000000000")
    c.check("error envelope: bad key is 401", status == 401 and body.get("success") is False, f"{status} {body}")

    if nats:
        nats.close()
    print(f"RESULT {c.passed} {c.failed}", flush=True)
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
