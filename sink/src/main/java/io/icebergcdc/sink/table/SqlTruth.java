package io.icebergcdc.sink.table;

import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Not;
import org.apache.iceberg.expressions.Or;
import org.apache.iceberg.expressions.UnboundPredicate;

/**
 * An Iceberg filter made to match exactly the rows for which the SQL predicate it was written as is
 * true. Iceberg evaluates its filters in two values, in which a null compares as lower than any
 * value and unequal to it: {@code region <> 'EU'} and {@code day < DATE '2026-01-05'} hold for a
 * null {@code region} or {@code day}, in its partitions and in its column statistics alike, so a
 * delete or an overwrite by such a filter would take rows that SQL's {@code WHERE} leaves (a
 * comparison with NULL is unknown, and so is its {@code NOT}). Each comparison here also asks its
 * column to be non-null, on whichever side of a {@code NOT} it stands.
 */
final class SqlTruth {

  private SqlTruth() {}

  /** The rows for which {@code filter} is true in SQL. */
  static Expression whereTrue(Expression filter) {
    switch (filter.op()) {
      case TRUE:
      case FALSE:
        return filter;
      case AND:
        return Expressions.and(whereTrue(((And) filter).left()), whereTrue(((And) filter).right()));
      case OR:
        return Expressions.or(whereTrue(((Or) filter).left()), whereTrue(((Or) filter).right()));
      case NOT:
        return whereFalse(((Not) filter).child());
      default:
        return compared(predicate(filter), false);
    }
  }

  /** The rows for which {@code filter} is false in SQL: neither true nor unknown. */
  private static Expression whereFalse(Expression filter) {
    switch (filter.op()) {
      case TRUE:
        return Expressions.alwaysFalse();
      case FALSE:
        return Expressions.alwaysTrue();
      case AND:
        return Expressions.or(
            whereFalse(((And) filter).left()), whereFalse(((And) filter).right()));
      case OR:
        return Expressions.and(whereFalse(((Or) filter).left()), whereFalse(((Or) filter).right()));
      case NOT:
        return whereTrue(((Not) filter).child());
      default:
        return compared(predicate(filter), true);
    }
  }

  private static Expression compared(UnboundPredicate<?> predicate, boolean negated) {
    switch (predicate.op()) {
      case IS_NULL:
      case NOT_NULL:
        // Never unknown.
        return negated ? predicate.negate() : predicate;
      default:
        return Expressions.and(
            Expressions.notNull(predicate.ref().name()), negated ? predicate.negate() : predicate);
    }
  }

  private static UnboundPredicate<?> predicate(Expression filter) {
    if (filter instanceof UnboundPredicate<?> predicate) {
      return predicate;
    }
    throw new IllegalArgumentException("not an unbound predicate: " + filter);
  }
}
