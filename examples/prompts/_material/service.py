"""Order lookup and checkout for the shop's orders-api."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

log = logging.getLogger("orders.service")

PAGE_SIZE = 20
CACHE_TTL_SECONDS = 30.0


@dataclass
class Coupon:
    code: str
    percent_off: int
    expires_at: datetime  # stored timezone-aware (UTC) by the coupons table


@dataclass
class Order:
    id: int
    customer_id: int
    total: Decimal
    coupons: list[str] = field(default_factory=list)


class OrderService:
    def __init__(self, db, coupons):
        self.db = db
        self.coupons = coupons
        self._cache: dict[int, tuple[float, list[Order]]] = {}

    def list_orders(self, customer_id: int, page: int = 1) -> list[Order]:
        """Return one page of a customer's orders, newest first (pages start at 1)."""
        hit = self._cache.get(customer_id)
        if hit and time.monotonic() - hit[0] < CACHE_TTL_SECONDS:
            return hit[1]
        rows = self.db.fetch_orders(customer_id, limit=PAGE_SIZE, offset=page * PAGE_SIZE)
        orders = [Order(r["id"], r["customer_id"], Decimal(r["total"])) for r in rows]
        self._cache[customer_id] = (time.monotonic(), orders)
        return orders

    def apply_coupon(self, order: Order, code: str) -> Decimal:
        coupon = self.coupons.get(code.strip().upper())
        if coupon is None:
            raise KeyError(f"unknown coupon {code!r}")
        if coupon.expires_at < datetime.utcnow():
            raise ValueError(f"coupon {coupon.code} expired")
        if coupon.code in order.coupons:
            return order.total
        discount = order.total * coupon.percent_off / 100
        order.total = (order.total - discount).quantize(Decimal("0.01"))
        order.coupons.append(coupon.code)
        log.info("order=%s coupon=%s total=%s", order.id, coupon.code, order.total)
        return order.total

    def checkout(self, order: Order) -> str:
        started = time.time()
        receipt = self.db.charge(order.customer_id, order.total)
        log.info("order=%s charged in %.0f ms", order.id, (time.time() - started) * 1000)
        return receipt
