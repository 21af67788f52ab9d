"""Prints the total with tip and each person's share: split.py TOTAL TIP_PERCENT PEOPLE."""
import sys
from decimal import Decimal, ROUND_HALF_UP

total, tip, people = Decimal(sys.argv[1]), Decimal(sys.argv[2]), int(sys.argv[3])
if people < 1:
    sys.exit("people must be at least 1")
cents = Decimal("0.01")
with_tip = (total * (1 + tip / 100)).quantize(cents, ROUND_HALF_UP)
share = (with_tip / people).quantize(cents, ROUND_HALF_UP)
print(f"total with tip: {with_tip}")
print(f"each of {people}: {share}")
