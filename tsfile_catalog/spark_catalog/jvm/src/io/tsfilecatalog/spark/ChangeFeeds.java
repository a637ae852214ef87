package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * The change data feed's ways into a session (docs/spark-catalog.md, "Change data feed"): the
 * {@code readChangeFeed} option of {@code spark.read...table(...)} (a resolution rule turning
 * the table's relation into its changes') and the table function {@code table_changes}. The
 * delegate plans both ({@code plan_changes}); this class only builds Spark's relations.
 */
final class ChangeFeeds {
  private ChangeFeeds() {}

  static final String FUNCTION = "table_changes";

  /** {@code table_changes}, for {@code SparkSessionExtensions.injectTableFunction}. */
  static Tuple3<FunctionIdentifier, ExpressionInfo, scala.Function1<Seq<Expression>, LogicalPlan>>
      tableFunction() {
    // table_changes(table, startingVersion[, endingVersion]): versions, or timestamp strings.
    ExpressionInfo info = new ExpressionInfo(ChangeFeeds.class.getName(), FUNCTION);
    return new Tuple3<>(
        new FunctionIdentifier(FUNCTION),
        info,
        new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
          @Override
          public LogicalPlan apply(Seq<Expression> arguments) {
            return tableChanges(CollectionConverters.asJava(arguments));
          }
        });
  }

  private static LogicalPlan tableChanges(List<Expression> arguments) {
    if (arguments.size() < 2 || arguments.size() > 3) {
      throw new IllegalArgumentException(
          "table_changes takes a table name, a starting version or timestamp, and an optional "
              + "ending one: table_changes('db.t', 1[, 5])");
    }
    String name = String.valueOf(literal(arguments.get(0), "table name"));
    Map<String, String> options = new HashMap<>();
    options.put("readChangeFeed", "true");
    bound(options, arguments.get(1), "starting");
    if (arguments.size() == 3) {
      bound(options, arguments.get(2), "ending");
    }
    SparkSession session = SparkSession.active();
    CatalogManager manager = session.sessionState().catalogManager();
    List<String> parts;
    try {
      parts = CollectionConverters.asJava(session.sessionState().sqlParser().parseMultipartIdentifier(name));
    } catch (Exception e) {
      throw new IllegalArgumentException("table_changes: " + e.getMessage(), e);
    }
    String catalogName;
    List<String> rest = new ArrayList<>(parts);
    if (parts.size() > 1 && manager.isCatalogRegistered(parts.get(0))) {
      catalogName = rest.remove(0);
    } else {
      catalogName = manager.currentCatalog().name();
      if (rest.size() == 1) {
        List<String> namespace = new ArrayList<>(List.of(manager.currentNamespace()));
        namespace.addAll(rest);
        rest = namespace;
      }
    }
    CatalogPlugin catalog = manager.catalog(catalogName);
    if (!(catalog instanceof TsFileCatalog)) {
      throw new IllegalArgumentException(
          "table_changes('" + name + "'): the table is in catalog " + catalogName
              + ", which is no tsfile catalog; table_changes reads the change feed of tsfile "
              + "catalog tables");
    }
    Identifier ident =
        Identifier.of(rest.subList(0, rest.size() - 1).toArray(new String[0]), rest.get(rest.size() - 1));
    return relation((TsFileCatalog) catalog, ident, new CaseInsensitiveStringMap(options), null);
  }

  private static Object literal(Expression expression, String what) {
    if (!expression.foldable()) {
      throw new IllegalArgumentException(
          "table_changes: the " + what + " must be a constant, not " + expression.sql());
    }
    Object value = expression.eval(null);
    if (value == null) {
      throw new IllegalArgumentException("table_changes: the " + what + " is null");
    }
    return value;
  }

  private static void bound(Map<String, String> options, Expression expression, String side) {
    Object value = literal(expression, side + " version");
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      options.put(side + "Version", value.toString());
    } else {
      // A timestamp string, as Delta's table_changes takes.
      options.put(side + "Timestamp", value.toString());
    }
  }

  /**
   * The changes relation of {@code ident}; its output keeps {@code previous}'s attributes for
   * the table's columns (when given), so references resolved against the table still hold.
   */
  static DataSourceV2Relation relation(
      TsFileCatalog catalog,
      Identifier ident,
      CaseInsensitiveStringMap options,
      DataSourceV2Relation previous) {
    ObjectNode request = catalog.tableRequest(ident);
    request.set("options", Client.map(options.asCaseSensitiveMap()));
    JsonNode plan = Client.call("plan_changes", request);
    return relation(catalog, ident, options, previous, new TsFileChangesTable(plan));
  }

  static DataSourceV2Relation relation(
      CatalogPlugin catalog,
      Identifier ident,
      CaseInsensitiveStringMap options,
      DataSourceV2Relation previous,
      org.apache.spark.sql.connector.catalog.Table table) {
    DataSourceV2Relation created =
        DataSourceV2Relation.create(table, Option.apply(catalog), Option.apply(ident), options, Option.empty());
    if (previous == null) {
      return created;
    }
    List<AttributeReference> output = new ArrayList<>();
    List<AttributeReference> old = CollectionConverters.asJava(previous.output());
    for (AttributeReference attribute : CollectionConverters.asJava(created.output())) {
      AttributeReference kept = attribute;
      for (AttributeReference candidate : old) {
        if (candidate.name().equalsIgnoreCase(attribute.name())
            && candidate.dataType().equals(attribute.dataType())) {
          kept = candidate;
        }
      }
      output.add(kept);
    }
    return new DataSourceV2Relation(
        table,
        CollectionConverters.asScala(output).toSeq(),
        created.catalog(),
        created.identifier(),
        options,
        Option.empty());
  }

  /** {@code spark.readStream.option("readChangeFeed", "true").table(...)}: the changes. */
  private static LogicalPlan stream(StreamingRelationV2 stream) {
    TsFileCatalog catalog = (TsFileCatalog) stream.catalog().get();
    DataSourceV2Relation changes =
        relation(catalog, stream.identifier().get(), stream.extraOptions(), null);
    return stream.copy(
        stream.source(),
        stream.sourceName(),
        changes.table(),
        stream.extraOptions(),
        changes.output(),
        stream.catalog(),
        stream.identifier(),
        stream.v1Relation(),
        stream.sourceIdentifyingName());
  }

  /** The resolution rule: a table relation read with {@code readChangeFeed} reads its changes. */
  static final class Resolve extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      return plan.resolveOperatorsUp(
          new scala.runtime.AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
            @Override
            public boolean isDefinedAt(LogicalPlan node) {
              if (node instanceof StreamingRelationV2) {
                StreamingRelationV2 stream = (StreamingRelationV2) node;
                return stream.table() instanceof TsFileTable
                    && stream.catalog().isDefined()
                    && stream.catalog().get() instanceof TsFileCatalog
                    && stream.identifier().isDefined()
                    && stream.extraOptions().getBoolean("readChangeFeed", false);
              }
              if (!(node instanceof DataSourceV2Relation)) {
                return false;
              }
              DataSourceV2Relation relation = (DataSourceV2Relation) node;
              return relation.table() instanceof TsFileTable
                  && relation.catalog().isDefined()
                  && relation.catalog().get() instanceof TsFileCatalog
                  && relation.identifier().isDefined()
                  && relation.options().getBoolean("readChangeFeed", false);
            }

            @Override
            public LogicalPlan apply(LogicalPlan node) {
              if (node instanceof StreamingRelationV2) {
                return stream((StreamingRelationV2) node);
              }
              DataSourceV2Relation relation = (DataSourceV2Relation) node;
              return relation(
                  (TsFileCatalog) relation.catalog().get(),
                  relation.identifier().get(),
                  relation.options(),
                  relation);
            }
          });
    }
  }
}
