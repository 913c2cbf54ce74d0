"""One app's flow through a client that openapi-python-client generated from openapi.yaml (docs/clients.md).

Run by .ci/clients against a fresh server: python3 flow.py BASE_URL TOKEN, with the generated package
(budget_server_client) importable. Every expectation that does not hold stops it with a non-zero exit.
"""

import datetime
import json
import sys
from decimal import Decimal

from budget_server_client import AuthenticatedClient
from budget_server_client.api.categories import (
    create_categories,
    create_category_transactions,
    get_category,
    list_categories,
    update_category,
)
from budget_server_client.api.sync import apply_batch, get_changes
from budget_server_client.api.transactions import create_transactions, delete_transaction, list_transactions
from budget_server_client.models import (
    BatchOperation,
    BatchOperationFailed,
    BatchOperationMethod,
    BatchRequest,
    Category,
    CategoryInput,
    CategoryPatch,
    CategoryTransactionInput,
    ChangeFeed,
    ChangeOp,
    Problem,
    Transaction,
    TransactionInput,
)


def expect(condition, message):
    if not condition:
        sys.exit(f"python flow: {message}")


def exact(response):
    """The body with every JSON number as a Decimal: the generated models keep what they are given."""
    return json.loads(response.content, parse_float=Decimal)


def main(base_url, token):
    client = AuthenticatedClient(base_url=base_url, token=token, raise_on_unexpected_status=True)
    with client:
        listed = list_categories.sync_detailed(client=client)
        expect(listed.status_code == 200 and isinstance(listed.parsed, list), f"list: {listed.status_code} {listed.content!r}")
        before = len(listed.parsed)

        # A quoted Idempotency-Key, as the IETF draft writes it: a retry replays the first answer.
        body = CategoryInput(title="Groceries (Python)", amount="400.00")
        created = create_categories.sync_detailed(client=client, body=body, idempotency_key='"py-create-1"')
        expect(created.status_code == 201 and isinstance(created.parsed, Category), f"create: {created.status_code} {created.content!r}")
        category = created.parsed
        replayed = create_categories.sync_detailed(client=client, body=body, idempotency_key='"py-create-1"')
        expect(replayed.status_code == 201 and replayed.headers.get("Idempotent-Replayed") == "true", "the retry was not a replay")
        expect(replayed.parsed.id == category.id, "the replay named another category")
        expect(category.created_at.tzinfo is not None, "createdAt is not a UTC time")

        # Two transactions: one amount as a JSON number, one as a string.
        milk = create_category_transactions.sync_detailed(
            category.id, client=client, body=CategoryTransactionInput(title="Milk", amount=3.49, date=datetime.date(2026, 11, 20)))
        shop = create_transactions.sync_detailed(
            client=client, body=TransactionInput(category_id=category.id, title="Weekly shop", amount="119.96"))
        for answer in (milk, shop):
            expect(answer.status_code == 201 and isinstance(answer.parsed, Transaction), f"add: {answer.status_code} {answer.content!r}")

        # spent and remaining, exactly: the model keeps the Decimals that json.loads made.
        read = get_category.sync_detailed(category.id, client=client)
        expect(read.status_code == 200, f"read: {read.status_code}")
        held = Category.from_dict(exact(read))
        expect(held.spent == Decimal("123.45") and held.remaining == Decimal("276.55"), f"spent {held.spent}, remaining {held.remaining}")
        expect(read.parsed.spent == 123.45, f"spent as a float: {read.parsed.spent}")
        etag = read.headers["ETag"]

        # _where is the JSON object's text.
        big = list_transactions.sync_detailed(client=client, field_where=json.dumps({"amount": {"gte": 100}, "categoryId": {"eq": category.id}}))
        expect(big.status_code == 200 and [t.title for t in big.parsed] == ["Weekly shop"], f"_where: {big.content!r}")

        # If-None-Match: 304 while unchanged.
        again = get_category.sync_detailed(category.id, client=client, if_none_match=etag)
        expect(again.status_code == 304 and again.content == b"", f"If-None-Match: {again.status_code}")

        # If-Match: the first edit holds, the second with the same (now stale) tag is 412.
        edited = update_category.sync_detailed(category.id, client=client, body=CategoryPatch(amount="450.00"), if_match=etag)
        expect(edited.status_code == 200, f"If-Match edit: {edited.status_code} {edited.content!r}")
        stale = update_category.sync_detailed(category.id, client=client, body=CategoryPatch(amount="500.00"), if_match=etag)
        expect(stale.status_code == 412 and isinstance(stale.parsed, Problem), f"stale If-Match: {stale.status_code}")
        expect(stale.headers["ETag"] == edited.headers["ETag"], "the 412 did not carry the current ETag")

        # A 422 problem names every invalid field.
        invalid = create_transactions.sync_detailed(
            client=client, body=TransactionInput(category_id=category.id, title="", amount="1.234"))
        expect(invalid.status_code == 422 and isinstance(invalid.parsed, Problem), f"422: {invalid.status_code}")
        expect(sorted(e.field for e in invalid.parsed.errors) == ["amount", "title"], f"422 fields: {invalid.content!r}")

        # The change feed names the deleted record.
        seq = int(read.headers["X-Sync-Seq"])
        deleted = delete_transaction.sync_detailed(milk.parsed.id, client=client)
        expect(deleted.status_code == 200, f"delete: {deleted.status_code}")
        feed = get_changes.sync_detailed(client=client, since=seq, collection="transactions")
        expect(feed.status_code == 200 and isinstance(feed.parsed, ChangeFeed), f"changes: {feed.status_code}")
        deletes = [c for c in feed.parsed.changes if c.op == ChangeOp.DELETE]
        expect([c.id for c in deletes] == [milk.parsed.id], f"the delete's id: {feed.content!r}")

        # An atomic batch whose second operation is stale: 412 with the current ETag, and its first operation is
        # rolled back. (The delete changed the category's spent, so its tag moved again.)
        current = get_category.sync_detailed(category.id, client=client).headers["ETag"]
        batch = BatchRequest(atomic=True, operations=[
            BatchOperation(method=BatchOperationMethod.POST, path="/categories", body={"title": "Rent (Python)", "amount": 950}),
            BatchOperation(method=BatchOperationMethod.PATCH, path=f"/categories/{category.id}", body={"amount": "1.00"}, if_match=etag),
        ])
        failed = apply_batch.sync_detailed(client=client, body=batch)
        expect(failed.status_code == 412 and isinstance(failed.parsed, BatchOperationFailed), f"batch: {failed.status_code} {failed.content!r}")
        expect(failed.parsed.operation == 1 and failed.parsed.failure.status == 412, f"batch failure: {failed.content!r}")
        expect(failed.parsed.headers["ETag"] == current, f"the failed operation's ETag: {failed.content!r}")
        after = list_categories.sync_detailed(client=client)
        expect(len(after.parsed) == before + 1, "the atomic batch left a category behind")
    print("python flow: passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
