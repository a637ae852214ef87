package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.runtime.AbstractFunction1;

/**
 * An analysis rule: a batch read of the {@code tsfile} Python source by path ({@code
 * spark.read.format("tsfile").load(path)}) becomes a read of the plugin's table for that path,
 * so it gets the catalog table's scan (pruned columns, pushed filters, aggregates answered from
 * statistics, limit and top-N).
 *
 * <p>The delegate decides ({@code resolve_path}): it resolves the read's options exactly as
 * the source does and describes the table, or declines (plain files, options only the source's
 * own scan honours, a user-given schema), and the source's relation stays. The relation's
 * output is kept, so nothing above it changes. A write's target is no child of its command and
 * is never replaced. {@code spark.tsfile.pathReads.enabled=false} turns the rule off.
 */
final class PathReads extends Rule<LogicalPlan> {
  /** Session conf: whether path reads get the plugin's scan (default true). */
  static final String ENABLED = "spark.tsfile.pathReads.enabled";

  private final SparkSession session;
  /** The source tables the delegate declined: asked once, not on every analyzer pass. */
  private final Map<Table, Boolean> declined = Collections.synchronizedMap(new WeakHashMap<>());

  private PathReads(SparkSession session) {
    this.session = session;
  }

  /** Adds the rule to the analyzer of every session {@code extensions} builds. */
  static void inject(SparkSessionExtensions extensions) {
    extensions.injectResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new PathReads(session);
          }
        });
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!"true".equalsIgnoreCase(session.sessionState().conf().getConfString(ENABLED, "true"))) {
      return plan;
    }
    return replace(plan);
  }

  private LogicalPlan replace(LogicalPlan plan) {
    if (plan instanceof DataSourceV2Relation) {
      return replaced((DataSourceV2Relation) plan);
    }
    return plan.mapChildren(
        new AbstractFunction1<LogicalPlan, LogicalPlan>() {
          @Override
          public LogicalPlan apply(LogicalPlan child) {
            return replace(child);
          }
        });
  }

  private LogicalPlan replaced(DataSourceV2Relation relation) {
    Table source = relation.table();
    if (!(source instanceof PythonTable)
        || !Scans.SHORT_NAME.equalsIgnoreCase(source.name())
        || declined.containsKey(source)) {
      return relation;
    }
    ObjectNode request = Client.object();
    request.set("options", Client.map(relation.options().asCaseSensitiveMap()));
    request.put("schema", relation.schema().json());
    JsonNode described = Client.call("resolve_path", request);
    if (described == null || described.isNull()) {
      declined.put(source, Boolean.TRUE);
      return relation;
    }
    return new DataSourceV2Relation(
        new PathTable(described),
        relation.output(),
        Option.empty(),
        Option.empty(),
        CaseInsensitiveStringMap.empty(),
        Option.empty());
  }

  /** The plugin's table over a path: the delegate's description, named by the path. */
  static final class PathTable extends TsFileTable {
    private final String name;

    PathTable(JsonNode description) {
      super(
          (ObjectNode) description.get("catalog"),
          Identifier.of(new String[0], description.get("name").asText()),
          description);
      this.name = description.get("name").asText();
    }

    @Override
    public String name() {
      return name;
    }
  }
}
