/**
 * Customers through the real `stripe@23.1.0` client: update with Stripe's unset semantics,
 * delete, and what a deleted customer still is (a stub) and no longer is (listed, payable,
 * held) — what GDPR erasure relies on.
 */
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { rejection, standinPerFile, topUpParams } from "./helpers.ts";

const stand = standinPerFile("whsec_customers_test");

const ADA = {
  name: "Ada Lovelace",
  email: "ada@example.com",
  phone: "+15555550100",
  description: "Parley org owner",
  metadata: { org_id: "org_ada", plan: "team" },
};

function createAda(): Promise<Stripe.Customer> {
  return stand.stripe.customers.create(ADA);
}

function eventsOfType(type: string) {
  return stand.standin.events().filter((e) => e.type === type);
}

async function apiRequest(method: string, path: string): Promise<Response> {
  return fetch(`${stand.standin.url}${path}`, {
    method,
    headers: { authorization: "Bearer sk_test_x" },
  });
}

describe("Checkout's pay page fills in the email as Stripe does", () => {
  const emailOn = async (url: string | null) => {
    const page = await (await fetch(url ?? "")).text();
    return /<input id="email"[^>]*value="([^"]*)"/.exec(page)?.[1];
  };

  it("the session's customer_email, else its Customer's email, else a test address", async () => {
    const given = await stand.stripe.checkout.sessions.create(
      topUpParams({ customer_email: "grace@example.com" }),
    );
    expect(await emailOn(given.url)).toBe("grace@example.com");
    const ada = await createAda();
    const named = await stand.stripe.checkout.sessions.create(topUpParams({ customer: ada.id }));
    expect(await emailOn(named.url)).toBe("ada@example.com");
    const bare = await stand.stripe.customers.create({ name: "No email" });
    const noEmail = await stand.stripe.checkout.sessions.create(topUpParams({ customer: bare.id }));
    expect(await emailOn(noEmail.url)).toBe("customer@example.com");
    const none = await stand.stripe.checkout.sessions.create(topUpParams());
    expect(await emailOn(none.url)).toBe("customer@example.com");
  });
});

describe("POST /v1/customers/:id", () => {
  it("sets the fields sent, merges metadata, and emits customer.updated with previous_attributes", async () => {
    const ada = await createAda();
    const updated = await stand.stripe.customers.update(
      ada.id,
      { email: "ada@lovelace.example", name: "Ada King", metadata: { plan: "pro", seat: "1" } },
      { idempotencyKey: "update-ada" },
    );
    expect(updated).toMatchObject({
      id: ada.id,
      object: "customer",
      email: "ada@lovelace.example",
      name: "Ada King",
      phone: ADA.phone,
      description: ADA.description,
      metadata: { org_id: "org_ada", plan: "pro", seat: "1" },
    });
    expect(updated.deleted).toBeUndefined();
    expect(await stand.stripe.customers.retrieve(ada.id)).toMatchObject({
      email: "ada@lovelace.example",
      metadata: { org_id: "org_ada", plan: "pro", seat: "1" },
    });

    const [event] = eventsOfType("customer.updated");
    expect(event).toMatchObject({
      data: {
        object: { id: ada.id, email: "ada@lovelace.example", name: "Ada King" },
        previous_attributes: {
          email: ADA.email,
          name: ADA.name,
          metadata: { plan: "team", seat: null },
        },
      },
      request: { id: updated.lastResponse.requestId, idempotency_key: "update-ada" },
    });
    expect(Object.keys(event?.data.previous_attributes ?? {}).sort()).toEqual([
      "email",
      "metadata",
      "name",
    ]);

    // The same values again change nothing, and Stripe emits no event for no change.
    await stand.stripe.customers.update(ada.id, { email: "ada@lovelace.example", metadata: {} });
    expect(eventsOfType("customer.updated")).toHaveLength(1);
  });

  it('unsets a field with "", one metadata key with an empty value, all metadata with metadata=""', async () => {
    const ada = await createAda();
    const unset = await stand.stripe.customers.update(ada.id, {
      email: "",
      phone: "",
      metadata: { plan: "" },
    });
    expect(unset).toMatchObject({
      email: null,
      phone: null,
      name: ADA.name,
      description: ADA.description,
      metadata: { org_id: "org_ada" },
    });
    expect(eventsOfType("customer.updated").at(-1)?.data.previous_attributes).toEqual({
      email: ADA.email,
      phone: ADA.phone,
      metadata: { plan: "team" },
    });

    // null is how stripe-node spells "unset" too: it sends the same empty value.
    const nulls = await stand.stripe.customers.update(ada.id, {
      name: "",
      description: "",
      metadata: { org_id: null },
    });
    expect(nulls).toMatchObject({ name: null, description: null, metadata: {} });

    await stand.stripe.customers.update(ada.id, { metadata: { a: "1", b: "2" } });
    const cleared = await stand.stripe.customers.update(ada.id, { metadata: "" });
    expect(cleared.metadata).toEqual({});
    expect(eventsOfType("customer.updated").at(-1)?.data.previous_attributes).toEqual({
      metadata: { a: "1", b: "2" },
    });
    const found = await stand.stripe.customers.retrieve(ada.id);
    expect(found).toMatchObject({
      email: null,
      name: null,
      phone: null,
      description: null,
      metadata: {},
    });
  });

  it("refuses an unknown parameter, a bad email, too many metadata keys and an unknown id, changing nothing", async () => {
    const ada = await createAda();
    const unknown = await rejection(
      stand.stripe.customers.update(ada.id, {
        emial: "x@example.com",
      } as Stripe.CustomerUpdateParams),
    );
    expect(unknown).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(unknown).toMatchObject({
      statusCode: 400,
      code: "parameter_unknown",
      param: "emial",
      message: "Received unknown parameter: emial",
    });

    const email = await rejection(stand.stripe.customers.update(ada.id, { email: "not-an-email" }));
    expect(email).toMatchObject({ statusCode: 400, code: "email_invalid", param: "email" });

    const many = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, "v"]));
    const tooMany = await rejection(stand.stripe.customers.update(ada.id, { metadata: many }));
    expect(tooMany).toMatchObject({ statusCode: 400, param: "metadata" });
    expect(tooMany.message).toBe("You can have up to 50 metadata keys.");

    const missing = await rejection(stand.stripe.customers.update("cus_test_nope", { name: "x" }));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({
      statusCode: 404,
      code: "resource_missing",
      message: "No such customer: 'cus_test_nope'",
    });

    expect(await stand.stripe.customers.retrieve(ada.id)).toMatchObject({
      email: ADA.email,
      metadata: ADA.metadata,
    });
    expect(eventsOfType("customer.updated")).toEqual([]);
  });
});

describe("DELETE /v1/customers/:id", () => {
  it("answers { id, object, deleted: true } and emits customer.deleted with the customer as it was", async () => {
    const ada = await createAda();
    const deleted = await stand.stripe.customers.del(ada.id);
    expect({ ...deleted }).toEqual({ id: ada.id, object: "customer", deleted: true });
    const raw = await (await apiRequest("GET", `/v1/customers/${ada.id}`)).json();
    expect(raw).toEqual({ id: ada.id, object: "customer", deleted: true });

    const [event] = eventsOfType("customer.deleted");
    expect(event).toMatchObject({
      data: { object: { id: ada.id, object: "customer", email: ADA.email, name: ADA.name } },
      request: { id: deleted.lastResponse.requestId },
    });
    expect(event?.data.previous_attributes).toBeUndefined();
    const listed = await stand.stripe.events.list({ type: "customer.*" });
    expect(listed.data.map((e) => e.type)).toEqual(["customer.deleted", "customer.created"]);
  });

  it("retrieves a deleted customer as the deleted stub, also where a session expands it", async () => {
    const ada = await createAda();
    const session = await stand.stripe.checkout.sessions.create(topUpParams({ customer: ada.id }));
    await stand.stripe.customers.del(ada.id);

    const found = await stand.stripe.customers.retrieve(ada.id);
    expect(found.deleted).toBe(true);
    // Exactly the stub: the client keeps lastResponse out of the enumerable fields.
    expect({ ...found }).toEqual({ id: ada.id, object: "customer", deleted: true });

    const expanded = await stand.stripe.checkout.sessions.retrieve(session.id, {
      expand: ["customer"],
    });
    expect(expanded.customer).toEqual({ id: ada.id, object: "customer", deleted: true });
  });

  it("leaves a deleted customer out of GET /v1/customers, the email filter included", async () => {
    const ada = await createAda();
    const grace = await stand.stripe.customers.create({ email: "grace@example.com" });
    await stand.stripe.customers.del(ada.id);
    const all = await stand.stripe.customers.list();
    expect(all.data.map((c) => c.id)).toEqual([grace.id]);
    const byEmail = await stand.stripe.customers.list({ email: ADA.email });
    expect(byEmail.data).toEqual([]);
  });

  it("refuses a Checkout Session and a billing portal session for a deleted customer", async () => {
    const ada = await createAda();
    await stand.stripe.customers.del(ada.id);

    const checkout = await rejection(
      stand.stripe.checkout.sessions.create(topUpParams({ customer: ada.id })),
    );
    expect(checkout).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(checkout).toMatchObject({
      statusCode: 400,
      code: "resource_missing",
      param: "customer",
      message: `No such customer: '${ada.id}'`,
    });

    const portal = await rejection(
      stand.stripe.billingPortal.sessions.create({
        customer: ada.id,
        return_url: "http://x.test/",
      }),
    );
    expect(portal).toMatchObject({
      statusCode: 400,
      code: "resource_missing",
      param: "customer",
      message: `No such customer: '${ada.id}'`,
    });
    expect((await stand.stripe.checkout.sessions.list()).data).toEqual([]);
  });

  it("answers a second delete, and an update after the delete, with 404 No such customer", async () => {
    const ada = await createAda();
    await stand.stripe.customers.del(ada.id);
    for (const call of [
      stand.stripe.customers.del(ada.id),
      stand.stripe.customers.update(ada.id, { name: "Ada" }),
      stand.stripe.customers.del("cus_test_never"),
    ]) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.statusCode).toBe(404);
      expect(error.code).toBe("resource_missing");
      expect(error.message).toMatch(/^No such customer: 'cus_test_/);
    }
    expect(eventsOfType("customer.deleted")).toHaveLength(1);
    expect(eventsOfType("customer.updated")).toHaveLength(0);
  });

  it("refuses parameters, and answers DELETE only where the API has it", async () => {
    const ada = await createAda();
    const withParam = await apiRequest("DELETE", `/v1/customers/${ada.id}?expand[]=x`);
    expect(withParam.status).toBe(400);
    expect(await withParam.json()).toMatchObject({
      error: { code: "parameter_unknown", param: "expand" },
    });
    expect((await stand.stripe.customers.retrieve(ada.id)).deleted).toBeUndefined();

    const elsewhere = await rejection(stand.stripe.rawRequest("DELETE", "/v1/charges/ch_test_x"));
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.message).toMatch(
      /^Unrecognized request URL \(DELETE: \/v1\/charges\/ch_test_x\)/,
    );
    const list = await apiRequest("DELETE", "/v1/customers");
    expect(list.status).toBe(404);
  });

  it("keeps the payment records that name a deleted customer, as Stripe does, and nothing else of it", async () => {
    const ada = await createAda();
    const session = await stand.stripe.checkout.sessions.create(topUpParams({ customer: ada.id }));
    const { paymentIntent, charge } = await stand.standin.pay(session.id);
    const portal = await stand.stripe.billingPortal.sessions.create({ customer: ada.id });
    expect((await fetch(portal.url)).status).toBe(200);

    await stand.stripe.customers.del(ada.id);

    // Kept, as on Stripe: what the payer gave at payment time, on the payment records.
    const paid = await stand.stripe.checkout.sessions.retrieve(session.id);
    expect(paid.customer).toBe(ada.id);
    expect(paid.customer_details).toMatchObject({ email: ADA.email, name: ADA.name });
    const paidCharge = await stand.stripe.charges.retrieve(charge.id);
    expect(paidCharge).toMatchObject({ customer: ada.id, billing_details: { email: ADA.email } });
    expect((await stand.stripe.paymentIntents.retrieve(paymentIntent.id)).customer).toBe(ada.id);

    // Gone: the customer's own fields, from every object the API and the pages serve.
    const served = JSON.stringify([
      await stand.stripe.customers.retrieve(ada.id),
      await stand.stripe.customers.list({ limit: 100 }),
      await stand.stripe.checkout.sessions.list({ limit: 100, expand: ["data.customer"] }),
      await stand.stripe.paymentIntents.list({ limit: 100, expand: ["data.customer"] }),
      await stand.stripe.charges.list({ limit: 100, expand: ["data.customer"] }),
      await stand.stripe.refunds.list({ limit: 100 }),
    ]);
    for (const value of [ADA.phone, ADA.description, "org_ada", "team"]) {
      expect(served).not.toContain(JSON.stringify(value));
    }
    expect((await fetch(portal.url)).status).toBe(404);

    // Events keep their snapshots (Stripe keeps events for 30 days); the README says so.
    const deletedEvent = eventsOfType("customer.deleted")[0];
    expect(deletedEvent?.data.object).toMatchObject({ phone: ADA.phone, metadata: ADA.metadata });
  });
});
