# ruff: noqa
# fmt: off
import base64
import json
import marshal
import pickle
import types
import zlib

import yaml

BLOB = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94."


def embedded():
    # ruleid: py-deserialise-embedded, py-deserialise-decoded
    obj = pickle.loads(base64.b64decode("gASVEAAAAAAAAACMBXBvc2l4lC4="))
    # ruleid: py-deserialise-embedded
    obj2 = pickle.loads(b"\x80\x04K\x01.")
    blob = b"\x80\x04\x95\x05."
    # ruleid: py-deserialise-embedded
    obj3 = pickle.loads(blob)
    return obj, obj2


def bytecode():
    # ruleid: py-deserialise-embedded, py-unmarshal
    code = marshal.loads(zlib.decompress(b"x\x9c\x03\x00\x00\x00\x00\x01"))
    return types.FunctionType(code, globals())


def decoded(blob_module):
    # ruleid: py-deserialise-decoded
    return pickle.loads(base64.b64decode(blob_module.DATA))


def unsafe_yaml(text):
    # ruleid: py-deserialise-decoded
    return yaml.load(text, Loader=yaml.Loader)


def benign(event, s3):
    # ok: py-deserialise-embedded, py-deserialise-decoded
    body = json.loads(event["body"])
    # ok: py-deserialise-embedded, py-deserialise-decoded
    cfg = yaml.safe_load(open("config.yaml"))
    # ok: py-deserialise-embedded, py-deserialise-decoded
    model = pickle.loads(s3.get_object(Bucket="models", Key="m.pkl")["Body"].read())
    # ok: py-deserialise-embedded
    raw = pickle.dumps(body)
    # ok: py-unmarshal
    packed = marshal.dumps((1, 2))
    return body, cfg, model, raw
