package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Avg;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.expressions.aggregate.Sum;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's pushed aggregation as JSON for the delegate, and the delegate's answer from
 * statistics (one row per group) as a local scan: no Spark job reads the table.
 */
final class Aggregates {
  private Aggregates() {}

  static ObjectNode toJson(Aggregation aggregation) {
    ObjectNode out = Client.object();
    ArrayNode functions = out.putArray("aggregates");
    for (AggregateFunc function : aggregation.aggregateExpressions()) {
      ObjectNode node = functions.addObject();
      node.put("function", function.getClass().getSimpleName());
      Expression argument = null;
      boolean distinct = false;
      if (function instanceof Count) {
        argument = ((Count) function).column();
        distinct = ((Count) function).isDistinct();
      } else if (function instanceof Sum) {
        argument = ((Sum) function).column();
        distinct = ((Sum) function).isDistinct();
      } else if (function instanceof Avg) {
        argument = ((Avg) function).column();
        distinct = ((Avg) function).isDistinct();
      } else if (function instanceof Min) {
        argument = ((Min) function).column();
      } else if (function instanceof Max) {
        argument = ((Max) function).column();
      }
      if (argument != null) {
        node.set("argument", Scans.toJson(argument));
      }
      node.put("distinct", distinct);
    }
    ArrayNode groups = out.putArray("group_by");
    for (Expression expression : aggregation.groupByExpressions()) {
      groups.add(Scans.toJson(expression));
    }
    return out;
  }

  /** The delegate's rows as a local scan of {@code schema}. */
  static StatisticsScan localScan(StructType schema, JsonNode rows, String description) {
    InternalRow[] out = new InternalRow[rows.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode row = rows.get(i);
      Object[] values = new Object[schema.fields().length];
      for (int j = 0; j < values.length; j++) {
        values[j] = value(schema.fields()[j].dataType(), row.get(j));
      }
      out[i] = new GenericInternalRow(values);
    }
    return new StatisticsScan(schema, out, description);
  }

  /** An aggregation answered from statistics: its rows, which {@link LocalAnswers} inlines. */
  static final class StatisticsScan implements LocalScan {
    private final StructType schema;
    private final InternalRow[] rows;
    private final String description;

    StatisticsScan(StructType schema, InternalRow[] rows, String description) {
      this.schema = schema;
      this.rows = rows;
      this.description = description;
    }

    @Override
    public InternalRow[] rows() {
      return rows;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public String description() {
      return description;
    }
  }

  /** A JSON value as Spark's internal value of {@code type} (a timestamp as microseconds). */
  private static Object value(DataType type, JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (type instanceof StringType) {
      return UTF8String.fromString(node.asText());
    }
    if (type instanceof BooleanType) {
      return node.asBoolean();
    }
    if (type instanceof IntegerType) {
      return node.asInt();
    }
    if (type instanceof ShortType) {
      return (short) node.asInt(); // min/max of CAST(b AS SMALLINT)
    }
    if (type instanceof ByteType) {
      return (byte) node.asInt(); // min/max of CAST(b AS TINYINT)
    }
    if (type instanceof DoubleType) {
      return node.asDouble();
    }
    if (type instanceof FloatType) {
      return (float) node.asDouble();
    }
    if (type instanceof ArrayType) {
      DataType element = ((ArrayType) type).elementType();
      Object[] values = new Object[node.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = value(element, node.get(i));
      }
      return new GenericArrayData(values);
    }
    if (type instanceof MapType) {
      // A JSON object: string keys (a history's operation parameters, a detail's properties).
      MapType map = (MapType) type;
      Object[] keys = new Object[node.size()];
      Object[] values = new Object[node.size()];
      int i = 0;
      for (java.util.Iterator<String> names = node.fieldNames(); names.hasNext(); i++) {
        String name = names.next();
        keys[i] = value(map.keyType(), Client.JSON.getNodeFactory().textNode(name));
        values[i] = value(map.valueType(), node.get(name));
      }
      return new ArrayBasedMapData(new GenericArrayData(keys), new GenericArrayData(values));
    }
    return node.asLong(); // LongType, TimestampType
  }
}
