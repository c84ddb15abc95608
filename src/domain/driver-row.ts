/**
 * A column as the mariadb driver hands it back, given the Prisma model's type for it (the pool's
 * options in src/db/client.ts): BIGINT, COUNT(*) and DECIMAL as number (`bigIntAsNumber`,
 * `decimalAsNumber`), BOOLEAN (TINYINT(1)) as 0 or 1, BLOB as Buffer; INT, text and DATETIME
 * (a Date) as Prisma types them. The one place those differences are written down.
 */
type DriverValue<V> = V extends bigint ? number : V extends boolean ? number : V extends Uint8Array ? Buffer : V;

/**
 * A row of a table as statements on the driver return it: the Prisma model (prisma/schema.prisma,
 * generated into src/generated/prisma) with each column's driver type. Row types in src/data are
 * `Pick`s of these for the columns a statement selects.
 */
export type DriverRow<Model> = { [K in keyof Model]: DriverValue<Model[K]> };
