package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedDataSource;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.DataSource;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * An analysis rule: a batch read of the {@code tsfile} Python source by path ({@code
 * spark.read.format("tsfile").load(path)}) becomes a read of the plugin's table for that path,
 * so it gets the catalog table's scan (pruned columns, pushed filters, aggregates answered from
 * statistics, limit and top-N).
 *
 * <p>The delegate decides ({@code resolve_path}): it resolves the read's options exactly as
 * the source does and describes the table, or declines (plain files, options only the source's
 * own scan honours, a user-given schema), and the source's relation stays. A write's target is
 * no child of its command and is never replaced. {@code spark.tsfile.pathReads.enabled=false}
 * turns the rule off.
 *
 * <p>The read is replaced before Spark resolves it ({@link Loads}, with the hint rules, ahead
 * of Spark's {@code ResolveDataSource}): Spark would otherwise start a Python worker at {@code
 * load()} only to ask the source for the schema the delegate describes anyway (~0.2 s, the
 * most of a selective query's time). The relation's columns are the described schema, which is
 * the source's own {@code schema()}, so the DataFrame is the one the source's relation gives.
 * This rule replaces a source relation Spark resolved otherwise (and keeps its output).
 */
final class PathReads extends Rule<LogicalPlan> {
  /** Session conf: whether path reads get the plugin's scan (default true). */
  static final String ENABLED = "spark.tsfile.pathReads.enabled";
  /**
   * Marks a read the delegate declined before Spark resolved it; Spark's analysis copies the
   * mark onto the source relation it resolves the read to, which is then not asked again.
   */
  private static final TreeNodeTag<Boolean> DECLINED =
      TreeNodeTag.apply("io.tsfilecatalog.pathReads.declined");

  private final SparkSession session;
  /** The source tables the delegate declined: asked once, not on every analyzer pass. */
  private final Map<Table, Boolean> declined = Collections.synchronizedMap(new WeakHashMap<>());

  private PathReads(SparkSession session) {
    this.session = session;
  }

  /** Adds the rules to the analyzer of every session {@code extensions} builds. */
  static void inject(SparkSessionExtensions extensions) {
    extensions.injectHintResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new Loads(session);
          }
        });
    extensions.injectResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new PathReads(session);
          }
        });
  }

  private static boolean enabled(SparkSession session) {
    return "true".equalsIgnoreCase(session.sessionState().conf().getConfString(ENABLED, "true"));
  }

  /** The delegate's description of the read with {@code options}, or null when it declines. */
  private static JsonNode describe(Map<String, String> options, String schema) {
    ObjectNode request = Client.object();
    request.set("options", Client.map(options));
    if (schema != null) {
      request.put("schema", schema);
    }
    JsonNode described = Client.call("resolve_path", request);
    return described == null || described.isNull() ? null : described;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!enabled(session)) {
      return plan;
    }
    return replace(plan);
  }

  private LogicalPlan replace(LogicalPlan plan) {
    return Plans.replaceDown(
        plan,
        node ->
            node instanceof DataSourceV2Relation ? replaced((DataSourceV2Relation) node) : null);
  }

  private LogicalPlan replaced(DataSourceV2Relation relation) {
    Table source = relation.table();
    if (!(source instanceof PythonTable)
        || !Scans.SHORT_NAME.equalsIgnoreCase(source.name())
        || declined.containsKey(source)
        || relation.getTagValue(DECLINED).isDefined()) {
      return relation;
    }
    JsonNode described =
        describe(relation.options().asCaseSensitiveMap(), relation.schema().json());
    if (described == null) {
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

  /**
   * The analysis rule that sees {@code load()}'s read before Spark resolves it: a batch read of
   * the registered {@code tsfile} Python source without a user-given schema becomes the
   * plugin's table when the delegate describes it; any other read is left to Spark, which
   * resolves it (and reports its errors) as without the extensions.
   */
  static final class Loads extends Rule<LogicalPlan> {
    private final SparkSession session;

    private Loads(SparkSession session) {
      this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!enabled(session)) {
        return plan;
      }
      return replace(plan);
    }

    private LogicalPlan replace(LogicalPlan plan) {
      return Plans.replaceDown(
          plan,
          node ->
              node instanceof UnresolvedDataSource ? replaced((UnresolvedDataSource) node) : null);
    }

    private LogicalPlan replaced(UnresolvedDataSource read) {
      if (read.isStreaming()
          || read.userSpecifiedSchema().isDefined()
          || !Scans.SHORT_NAME.equalsIgnoreCase(read.format())
          || read.getTagValue(DECLINED).isDefined()) {
        return read;
      }
      Map<String, String> options = options(read);
      if (options == null || !pythonSource(read.format())) {
        return read;
      }
      JsonNode described = describe(options, null);
      if (described == null) {
        read.setTagValue(DECLINED, Boolean.TRUE);
        return read;
      }
      // Spark's own construction of a source's relation (the columns from the table's schema),
      // with the options the plugin's table holds itself.
      return DataSourceV2Relation.create(
          new PathTable(described),
          Option.empty(),
          Option.empty(),
          CaseInsensitiveStringMap.empty(),
          Option.empty());
    }

    /**
     * The options Spark hands the source for {@code read}: the reader's, with {@code
     * load(path)}'s one path as {@code path}; null for what Spark itself refuses or passes
     * otherwise (a path both given and loaded, several paths), which stays Spark's to resolve.
     */
    private Map<String, String> options(UnresolvedDataSource read) {
      Map<String, String> options =
          new LinkedHashMap<>(CollectionConverters.asJava(read.options().originalMap()));
      List<String> paths = CollectionConverters.asJava(read.paths());
      if (paths.isEmpty()) {
        return options;
      }
      boolean given = read.options().contains("path") || read.options().contains("paths");
      if (paths.size() > 1 || given) {
        return null;
      }
      options.put("path", paths.get(0));
      return options;
    }

    /** Whether {@code format} names a Python source of the session (as Spark looks it up). */
    private boolean pythonSource(String format) {
      SQLConf conf = session.sessionState().conf();
      try {
        Option<?> provider = DataSource.lookupDataSourceV2(format, conf);
        return provider.isDefined() && provider.get() instanceof PythonDataSourceV2;
      } catch (Exception e) {
        return false; // Spark reports the unknown source when it resolves the read
      }
    }
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
