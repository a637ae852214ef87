package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.connector.expressions.Cast;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.GeneralScalarExpression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.types.Decimal;

/**
 * Spark's V2 expressions as JSON trees, with no meaning attached: the delegate decides what a
 * predicate means and whether the scan can evaluate it exactly.
 *
 * <p>{@code {"ref": [names]}} for a column, {@code {"lit": text, "type": json}} for a literal
 * (text exact: a FLOAT as the double it widens to, a DECIMAL in plain notation), {@code {"op":
 * name, "args": [...]}} for Spark's named predicates and functions, {@code {"cast": type json,
 * "arg": ...}} for a cast, {@code {"other": text}} for anything else.
 */
final class Scans {
  /** The name the {@code tsfile} Python data source is registered under. */
  static final String SHORT_NAME = "tsfile";

  private Scans() {}

  static ObjectNode toJson(Expression expression) {
    ObjectNode out = Client.object();
    if (expression instanceof NamedReference) {
      out.set("ref", Client.strings(((NamedReference) expression).fieldNames()));
    } else if (expression instanceof Literal) {
      Literal<?> literal = (Literal<?>) expression;
      out.put("lit", literalText(literal.value()));
      out.put("type", literal.dataType().json());
    } else if (expression instanceof GeneralScalarExpression) {
      GeneralScalarExpression call = (GeneralScalarExpression) expression;
      out.put("op", call.name());
      ArrayNode args = out.putArray("args");
      for (Expression child : call.children()) {
        args.add(toJson(child));
      }
    } else if (expression instanceof Cast) {
      Cast cast = (Cast) expression;
      out.put("cast", cast.dataType().json());
      out.set("arg", toJson(cast.expression()));
    } else {
      out.put("other", expression.toString());
    }
    return out;
  }

  private static String literalText(Object value) {
    if (value == null) {
      return null;
    }
    if (value instanceof Float) {
      return Double.toString(((Float) value).doubleValue());
    }
    if (value instanceof Decimal) {
      return ((Decimal) value).toJavaBigDecimal().toPlainString();
    }
    return value.toString();
  }
}
