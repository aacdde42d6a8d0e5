/**
 * The records the two services store and return, field for field as their documents define them, and the stored
 * forms the simulator's inspection methods list.
 *
 * @module
 */

/** A customer query, every field of section 2 of the Tap document. @group Records */
export interface SimulatedCustomerQuery {
  /** UUID of the query. */
  id: string;
  /** The calling partner, from its API key. */
  partner: {
    /** UUID of the partner. */
    partnerId: string;
    /** Name of the partner organization. */
    partnerName: string;
  };
  /** The tag holder. */
  customer: {
    /** First name. */
    firstName: string;
    /** Last name. */
    lastName: string;
  };
  /** The tapped tag. */
  tag: {
    /** Echoes the request's `tagId`. */
    tagId: string;
    /** Printed number of the tag. */
    tagNumber: string;
    /** Every mobile money number on the tag. */
    mobileNumbers: {
      /** Provider, e.g. `airtel_money`. */
      operator: string;
      /** International digits without a plus sign. */
      mobileNumber: string;
      /** `active` or `inactive`. */
      status: string;
    }[];
    /** `active` (only active tags resolve). */
    status: string;
  };
  /** The transaction, echoing the request. */
  transaction: {
    /** Echoes the request. */
    merchantId: string;
    /** Echoes the request. */
    merchantName: string;
    /** Echoes the request. */
    terminalId: string;
    /** Echoes the request. */
    referenceId: string;
    /** Always `ZMW`. */
    currency: 'ZMW';
    /** Echoes the request. */
    amount: number;
    /** Set by the simulator (default 1 % of the amount, rounded to the ngwee). */
    serviceCharge: number;
    /** `pending`, and never changes (the document shows no transitions). */
    status: string;
  };
  /** ISO 8601 with milliseconds and `Z`. */
  createdAt: string;
  /** ISO 8601 with milliseconds and `Z`; equals `createdAt`. */
  updatedAt: string;
}

/** A collection record as `GET /v1/collections/:id` returns it. @group Records */
export interface SimulatedCollection {
  /** UUID assigned by the simulator; the `:id` of `GET /v1/collections/:id`. */
  id: string;
  /** The caller's external reference (UUID). */
  referenceId: string;
  /** The credited product (UUID). */
  productId: string;
  /** As sent (any accepted form). */
  phoneNumber: string;
  /** As sent. */
  amount: number;
  /** Always `ZMW`. */
  currency: 'ZMW';
  /** As sent, or `null` when absent. */
  narration: string | null;
  /** `pending`, then `successful` or `failed`. */
  status: 'pending' | 'successful' | 'failed';
  /** `null` while pending, then e.g. `SUCCESS` or `INTERNAL_SYSTEM_ERROR`. */
  transactionCode: string | null;
  /** `null` while pending, then explanatory text. */
  reason: string | null;
  /** ISO 8601 with milliseconds and `Z`. */
  createdAt: string;
  /** ISO 8601 with milliseconds and `Z`; the settlement moment once settled. */
  updatedAt: string;
}

/** A stored collection as {@link Simulator.collections} lists it: the record plus simulator bookkeeping. @group Records */
export interface StoredCollection extends SimulatedCollection {
  /** The owning partner (from the key that created it). */
  readonly partnerId: string;
  /** How many status checks (`GET /v1/collections/check/:referenceId`) it has answered. */
  readonly statusChecks: number;
}

/** A stored customer query as {@link Simulator.customerQueries} lists it. @group Records */
export interface StoredCustomerQuery extends SimulatedCustomerQuery {
  /** The owning partner. */
  readonly partnerId: string;
}
