"""Uploading a version: a zip in, validated before anything is stored or built.

Order matters for "nothing lost, nothing left behind": the archive is validated in a
scratch directory (removed afterwards, ``sless.validation.ReportCache``), the blob is
stored only for code that passed and fits the tenant's stored-code quota (checked before
validation, and again under the tenant's lock right before the blob is stored), and only
then does the function point at the new code. A rejected upload changes nothing but the
function's last validation report, and its phase where nothing else could run:
:func:`refused_phase` is the one decision of what a refused upload does to a function's
status (the API, ``sless ls`` and the console all show what it stored). A function that
has code keeps its phase (a serving version serves on, a held one waits for its review);
one that has none reads ``Rejected``, with the first finding as the reason.

Every entry point that uploads (today the gateway's ``POST .../upload``) calls
:func:`upload`; the HTTP concerns (the body's size, ``Idempotency-Key``) stay in the router.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sless.errors import ValidationRejected
from sless.functions import versioning
from sless.functions.services import FunctionServices
from sless.models import CodeRef, Function, Phase
from sless.validation import Report, Verdict

#: how much of a finding's text a refused upload's status message keeps
_REASON_CHARS = 300


async def validate(
    services: FunctionServices, function: Function, data: bytes, sha256: str
) -> Report:
    report, cached = await services.validation.validate(data, sha256=sha256, spec=function.spec)
    services.on_validated(report, cached)
    return report


def refused_phase(function: Function, report: Report) -> tuple[Phase, str] | None:
    """The phase and message a refused upload (``report``) leaves ``function`` in; None:
    its phase stays as it is, since it has code (serving, building or held) that the
    refused upload did not replace. A function with no code has nothing that will run:
    ``Rejected``, with the first finding that rejects as the reason."""
    if function.spec.code is not None:
        return None
    rejecting = [f for f in report.findings if f.severity is Verdict.REJECT]
    first = next(iter(rejecting or report.findings), None)
    reason = (first.message or first.rule) if first is not None else ""
    reason = reason[:_REASON_CHARS] or "refused by validation"
    more = len(report.findings) - 1
    return Phase.REJECTED, f"upload rejected: {reason}" + (f" (+{more} more)" if more > 0 else "")


async def _refuse(
    services: FunctionServices, function: Function, report: Report, summary: dict[str, Any]
) -> ValidationRejected:
    """Record a refused upload's report (and the phase :func:`refused_phase` decides, from
    the function as it is under the tenant's lock: no upload can give it code meanwhile)."""
    ns, name = function.namespace, function.name
    async with services.quotas.guard(ns):
        current = await services.backend.get_function(ns, name)
        phase = refused_phase(current, report)
        await services.backend.record_validation(ns, name, summary, phase=phase)
    return ValidationRejected(
        f"the upload was rejected by validation ({len(report.findings)} findings)",
        details=summary,
    )


async def upload(
    services: FunctionServices,
    function: Function,
    data: bytes,
    traffic: int | None,
    actor: str,
) -> tuple[int, Any]:
    """Validate ``data`` as the next version of ``function`` (as read when the upload
    arrived); the HTTP status and body of the answer."""
    ns, name = function.namespace, function.name
    sha256 = hashlib.sha256(data).hexdigest()
    code = function.spec.code
    if code is not None and code.sha256 == sha256 and function.status.phase is not Phase.FAILED:
        # the same code again: nothing to validate, store or build
        same = {"sha256": sha256, "phase": function.status.phase.value, "unchanged": True}
        return 202, {**same, "version": code.version}
    quotas = services.quotas
    # refused early, before validation work, then checked again under the tenant's lock
    early = await quotas.of(ns)
    early.check_code(await services.backend.list_functions(ns), name, len(data))
    report = await validate(services, function, data, sha256)
    summary = report.model_dump(mode="json")
    if report.verdict is Verdict.REJECT:
        raise await _refuse(services, function, report, summary)
    held = report.verdict is Verdict.REVIEW
    async with quotas.guard(ns) as quota:
        current = await services.backend.list_functions(ns)
        quota.check_code(current, name, len(data))
        function = next((f for f in current if f.name == name), function)
        version = await services.versions.next_version(ns, name)
        split = versioning.upload_traffic(function.spec.version, version, traffic)
        key = await services.blobs.put(sha256, data)
        code = CodeRef(sha256=sha256, blob_key=key, size=len(data), version=version)
        # the version first: a function never points at a version that is not recorded
        await services.versions.create(
            ns,
            name,
            version,
            function.spec.model_copy(update={"code": code}),
            validation=summary,
            state=versioning.state_of(held),
            created_by=actor,
        )
        updated = await services.backend.set_code(
            ns, name, code, held=held, validation=summary, traffic=split
        )
        await versioning.prune(services, ns, name, updated.spec, function.status.version)
    body: dict[str, Any] = {
        "sha256": sha256,
        "phase": updated.status.phase.value,
        "verdict": report.verdict.value,
        "version": version,
    }
    if report.verdict is Verdict.REVIEW:
        body["review_id"] = await services.reviews.open(ns, name, sha256, summary)
    return 202, body
