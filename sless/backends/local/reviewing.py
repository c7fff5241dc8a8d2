"""What an upload's validation and the provider's review do to a function's status in
embedded mode: held code is stored Validating, a rejection Rejected, an approval Pending
again (the reconciler then asks the code gate before it builds anything); a refused upload
stores its report, and the phase ``sless.functions.uploading.refused_phase`` decides.

A mixin of ``LocalBackend``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sless.models import CodeRef, Function, Phase, TrafficTarget
from sless.store import FunctionRepository


class CodeReviews:
    functions: FunctionRepository

    async def set_code(
        self,
        namespace: str,
        name: str,
        code: CodeRef,
        *,
        held: bool,
        validation: dict[str, Any],
        traffic: Sequence[TrafficTarget] = (),
    ) -> Function:
        record = await self.functions.get(namespace, name)
        spec = record.function.spec.model_copy(update={"code": code, "traffic": list(traffic)})
        phase = Phase.VALIDATING if held else Phase.PENDING
        updated = await self.functions.replace_spec(
            namespace,
            name,
            spec,
            phase=phase,
            validation=validation,
            message="held for provider review" if held else "",
        )
        return updated.function

    async def decide_review(
        self, namespace: str, name: str, sha256: str, *, approve: bool, reason: str
    ) -> None:
        record = await self.functions.get(namespace, name)
        function = record.function
        code = function.spec.code
        if code is None or code.sha256 != sha256 or function.status.phase is not Phase.VALIDATING:
            return  # a newer upload replaced the reviewed code: nothing to release
        if approve:
            await self.functions.set_status(
                namespace, name, phase=Phase.PENDING, generation=record.generation
            )
        else:
            await self.functions.set_status(
                namespace,
                name,
                phase=Phase.REJECTED,
                message=f"rejected by the provider's review: {reason}",
                generation=record.generation,
            )

    async def record_validation(
        self,
        namespace: str,
        name: str,
        validation: dict[str, Any],
        *,
        phase: tuple[Phase, str] | None = None,
    ) -> None:
        if phase is None:
            status = (await self.functions.get(namespace, name)).function.status
            phase = (status.phase, status.message)
        await self.functions.set_status(
            namespace, name, phase=phase[0], message=phase[1], validation=validation
        )
