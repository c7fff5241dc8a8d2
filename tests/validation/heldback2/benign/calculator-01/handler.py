"""Evaluates arithmetic safely: parses the expression and walks its AST."""

import ast
import math
import operator

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.Mod: operator.mod, ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCS = {"sqrt": math.sqrt, "log": math.log, "sin": math.sin, "cos": math.cos, "abs": abs}


def _eval(node):
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
        return _FUNCS[node.func.id](*[_eval(a) for a in node.args])
    raise ValueError("unsupported expression")


def handle(event, context):
    expr = str(event["query"].get("expr", "1+1"))[:200]
    try:
        return {"expr": expr, "value": _eval(ast.parse(expr, mode="eval"))}
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError) as exc:
        return {"statusCode": 400, "body": {"error": str(exc)}}
