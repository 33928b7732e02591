package dev.ticketd.client;

/** A Snowflake ID taken apart: Unix milliseconds, worker ID, sequence within the millisecond. */
public record SnowflakeParts(long timestampMs, int workerId, int sequence) {}
