"""A Python dendrite shaped like bittensor's (10.2): the comparison client of ping_compare.py.

It does, per call, the work bittensor's dendrite does, so that the ratio measured against the
module is the one a validator would see when it swaps one for the other:

  forward   wraps a single axon in a list, checks for a streaming synapse class, runs one
            coroutine per axon under asyncio.gather, each on a copy of the synapse (bittensor
            copies with model_copy(): a shallow copy, no deepcopy);
  call      times the call, builds the URL, preprocesses, logs the outgoing request (the log
            line, with the synapse's recursive size, is built whether or not it is printed),
            posts with the model's headers and json=model.dict() on one aiohttp.ClientSession,
            reads response.json(), processes the response, sets process_time, logs the
            incoming response, appends Synapse.from_headers(to_headers()) to the history and
            returns deserialize();
  preprocess
            sets the timeout and builds both TerminalInfo models (validated on assignment), then
            signs "nonce.dendrite_hotkey.axon_hotkey.uuid.body_hash" with the module's Keypair;
  to_headers
            name and timeout, every non-None TerminalInfo field, the required fields from the
            model's JSON schema (asked once per field; see Synapse.required_fields), the
            headers' own size, the synapse's recursive size and the body hash;
  process_server_response
            on 200 validates the JSON body into a new model and copies its fields back one
            assignment (validated) at a time, else copies status and message; then parses the
            response headers into a model (from_headers) and merges its non-None TerminalInfo
            fields over ours; the dendrite's status becomes the axon's.

The models are pydantic models with validate_assignment and the string-to-number validators of
TerminalInfo. bittensor 10 uses the pydantic v2 API; Debian ships pydantic v1, so the models use
the v1 API (from pydantic.v1 when pydantic 2 is installed). Errors are mapped to statuses as
bittensor's DENDRITE_ERROR_MAPPING does. This is our own code, written from the behaviour
documented above.
"""
import asyncio
import base64
import hashlib
import json
import logging
import sys
import time
import uuid
from typing import ClassVar, Optional, Tuple

import aiohttp
import pydantic

if pydantic.VERSION.startswith("1."):
    import pydantic as pd
else:  # pydantic 2 keeps the v1 API as pydantic.v1
    import pydantic.v1 as pd

VERSION_AS_INT = 10002000  # what a bittensor 10.2 dendrite announces
TRACE = 5  # bittensor's trace level: below DEBUG, so the lines are built but not printed
log = logging.getLogger("shaped_dendrite")


def sha3_hex(text):
    return hashlib.sha3_256(text.encode()).hexdigest()


def recursive_size(obj, seen=None):
    """sys.getsizeof over the object graph (dict items, __dict__, iterables), each object once:
    the figure bittensor puts in total_size."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(recursive_size(k, seen) + recursive_size(v, seen) for k, v in obj.items())
    elif hasattr(obj, "__dict__"):
        size += recursive_size(obj.__dict__, seen)
    elif hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, bytearray)):
        size += sum(recursive_size(x, seen) for x in obj)
    return size


def _as_int(v):
    return None if v is None else int(v)


def _as_float(v):
    return None if v is None else float(v)


class TerminalInfo(pd.BaseModel):
    """One end's block (dendrite or axon): every field optional, numbers also accepted as the
    strings the headers carry."""

    class Config:
        validate_assignment = True

    status_code: Optional[int] = None
    status_message: Optional[str] = None
    process_time: Optional[float] = None
    ip: Optional[str] = None
    port: Optional[int] = None
    version: Optional[int] = None
    nonce: Optional[int] = None
    uuid: Optional[str] = None
    hotkey: Optional[str] = None
    signature: Optional[str] = None

    _ints = pd.validator("status_code", "port", "version", "nonce", pre=True,
                         allow_reuse=True)(_as_int)
    _floats = pd.validator("process_time", pre=True, allow_reuse=True)(_as_float)


class Synapse(pd.BaseModel):
    """The base synapse: name (always the class's name), timeout, sizes, the two TerminalInfo
    blocks and the body hash; subclasses add fields and required_hash_fields."""

    class Config:
        validate_assignment = True

    required_hash_fields: ClassVar[Tuple[str, ...]] = ()

    name: Optional[str] = None
    timeout: Optional[float] = 12.0
    total_size: Optional[int] = 0
    header_size: Optional[int] = 0
    dendrite: Optional[TerminalInfo] = TerminalInfo()
    axon: Optional[TerminalInfo] = TerminalInfo()
    computed_body_hash: Optional[str] = ""

    @pd.root_validator(pre=True, allow_reuse=True)
    def _class_name(cls, values):
        values["name"] = cls.__name__
        return values

    _ints = pd.validator("total_size", "header_size", pre=True, allow_reuse=True)(_as_int)
    _floats = pd.validator("timeout", pre=True, allow_reuse=True)(_as_float)

    def deserialize(self):
        return self

    def get_total_size(self):
        self.total_size = recursive_size(self)
        return self.total_size

    def required_fields(self, rebuild_schema=False):
        """The JSON schema's required fields. bittensor 10 asks pydantic 2's model_json_schema(),
        which builds the schema on every call; pydantic 1's schema() is cached per class, so
        rebuild_schema=True builds it afresh (pydantic 1's generator) to show that cost."""
        if rebuild_schema:
            return pd.schema.model_schema(type(self)).get("required", [])
        return type(self).schema().get("required", [])

    @property
    def body_hash(self):
        fields = self.dict() if self.required_hash_fields else {}
        return sha3_hex("".join(sha3_hex(str(fields[f])) for f in self.required_hash_fields))

    def to_headers(self, rebuild_schema=False):
        headers = {"name": self.name, "timeout": str(self.timeout)}
        for prefix, block in (("axon", self.axon), ("dendrite", self.dendrite)):
            if block:
                headers.update({f"bt_header_{prefix}_{k}": str(v)
                                for k, v in block.dict().items() if v is not None})
        for field, value in self.dict().items():
            required = self.required_fields(rebuild_schema)  # per field, as bittensor does
            if field in headers or value is None:
                continue
            if field in required:
                # an empty value of the field's type, base64 JSON (what bittensor sends)
                headers[f"bt_header_input_obj_{field}"] = base64.b64encode(
                    json.dumps(type(value)()).encode()).decode()
        headers["header_size"] = str(sys.getsizeof(headers))
        headers["total_size"] = str(self.get_total_size())
        headers["computed_body_hash"] = self.body_hash
        return headers

    @classmethod
    def from_headers(cls, headers):
        inputs = {"axon": {}, "dendrite": {}}
        for key, value in headers.items():
            if "bt_header_axon_" in key:
                inputs["axon"][key.split("bt_header_axon_")[1]] = value
            elif "bt_header_dendrite_" in key:
                inputs["dendrite"][key.split("bt_header_dendrite_")[1]] = value
            elif "bt_header_input_obj_" in key:
                field = key.split("bt_header_input_obj_")[1]
                if field not in inputs:
                    try:
                        inputs[field] = json.loads(base64.b64decode(value.encode()).decode())
                    except ValueError as e:  # bad base64 or JSON: logged and skipped
                        log.error("input_obj header %s: %s", key, e)
        for key in ("timeout", "name", "header_size", "total_size", "computed_body_hash"):
            inputs[key] = headers.get(key)
        return cls(**inputs)


class StreamingSynapse(Synapse):
    """Marker base class: forward() checks for it as bittensor does (no streaming here)."""


# By the exception's exact type, as bittensor looks it up; anything else is 422.
ERRORS = {
    aiohttp.ClientConnectorError: (503, "Service unavailable"),
    asyncio.TimeoutError: (408, "Request timeout"),
    aiohttp.ClientResponseError: (None, "Client response error"),
    aiohttp.ClientPayloadError: (400, "Payload error"),
    aiohttp.ClientError: (500, "Client error"),
    aiohttp.ServerTimeoutError: (504, "Server timeout error"),
    aiohttp.ServerDisconnectedError: (503, "Service disconnected"),
    aiohttp.ServerConnectionError: (503, "Service connection error"),
}


class ShapedDendrite:
    """bittensor's Dendrite call path over one aiohttp.ClientSession, signing with a
    bittensor_cpp.Keypair (or anything with ss58_address and sign(str) -> bytes)."""

    def __init__(self, keypair, external_ip="127.0.0.1", rebuild_schema=False):
        self.keypair = keypair
        self.rebuild_schema = rebuild_schema  # see Synapse.required_fields
        self.uuid = str(uuid.uuid1())
        self.external_ip = external_ip
        self.synapse_history = []
        self._session = None

    @property
    async def session(self):
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self):
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def forward(self, axons, synapse, timeout=12.0, deserialize=True):
        single = not isinstance(axons, list)
        if single:
            axons = [axons]
        if isinstance(synapse, StreamingSynapse):
            raise NotImplementedError("streaming synapses are not part of the comparison")

        async def one(target):
            return await self.call(target, synapse.copy(), timeout, deserialize)

        responses = await asyncio.gather(*(one(a) for a in axons))
        return responses[0] if single and len(responses) == 1 else responses

    def endpoint_url(self, axon, request_name):
        host = "0.0.0.0" if axon.ip == self.external_ip else axon.ip
        return f"http://{host}:{axon.port}/{request_name}"

    async def call(self, target, synapse, timeout=12.0, deserialize=True):
        start = time.time()
        request_name = type(synapse).__name__
        url = self.endpoint_url(target, request_name)
        synapse = self.preprocess_synapse_for_request(target, synapse, timeout)
        try:
            self._log("-->", synapse)
            async with (await self.session).post(
                    url, headers=synapse.to_headers(self.rebuild_schema), json=synapse.dict(),
                    timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                body = await response.json()
                self.process_server_response(response, body, synapse)
            synapse.dendrite.process_time = str(time.time() - start)
        except Exception as e:  # every failure becomes a status, as bittensor's
            self.process_error(synapse, request_name, e)
        finally:
            self._log("<--", synapse)
            self.synapse_history.append(
                Synapse.from_headers(synapse.to_headers(self.rebuild_schema)))
        return synapse.deserialize() if deserialize else synapse

    def preprocess_synapse_for_request(self, target, synapse, timeout=12.0):
        synapse.timeout = timeout
        synapse.dendrite = TerminalInfo(ip=self.external_ip, version=VERSION_AS_INT,
                                        nonce=time.time_ns(), uuid=self.uuid,
                                        hotkey=self.keypair.ss58_address)
        synapse.axon = TerminalInfo(ip=target.ip, port=target.port, hotkey=target.hotkey)
        d = synapse.dendrite
        message = f"{d.nonce}.{d.hotkey}.{synapse.axon.hotkey}.{d.uuid}.{synapse.body_hash}"
        synapse.dendrite.signature = "0x" + self.keypair.sign(message).hex()
        return synapse

    def process_server_response(self, response, body, local):
        if response.status == 200:
            server = type(local)(**body)
            for key in local.dict().keys():
                try:
                    setattr(local, key, getattr(server, key))
                except Exception:  # a field the server may not change: keep ours
                    pass
        else:
            if local.axon is None:
                local.axon = TerminalInfo()
            local.axon.status_code = response.status
            local.axon.status_message = body.get("message")
        server_headers = Synapse.from_headers(response.headers)
        local.dendrite.__dict__.update({**local.dendrite.dict(exclude_none=True),
                                        **server_headers.dendrite.dict(exclude_none=True)})
        local.axon.__dict__.update({**local.axon.dict(exclude_none=True),
                                    **server_headers.axon.dict(exclude_none=True)})
        local.dendrite.status_code = local.axon.status_code
        local.dendrite.status_message = local.axon.status_message

    def process_error(self, synapse, request_name, e):
        status, text = ERRORS.get(type(e), (422, "Failed to parse response"))
        if status is None:
            status = e.status
        log.debug("%s#%s: %s", type(e).__name__, uuid.uuid4(), e)
        synapse.dendrite.status_code = status
        if isinstance(e, aiohttp.ClientConnectorError):
            synapse.dendrite.status_message = (
                f"{text} at {synapse.axon.ip}:{synapse.axon.port}/{request_name}")
        elif isinstance(e, asyncio.TimeoutError):
            synapse.dendrite.status_message = f"{text} after {synapse.timeout} seconds"
        else:
            synapse.dendrite.status_message = f"{text}: {e}"

    def _log(self, direction, synapse):
        # Built eagerly, as bittensor's f-string arguments are, then dropped below TRACE.
        a, d = synapse.axon, synapse.dendrite
        line = (f"dendrite | {direction} | {synapse.get_total_size()} B | {synapse.name} | "
                f"{a.hotkey} | {a.ip}:{a.port} | {d.status_code} | {d.status_message}")
        log.log(TRACE, line)
